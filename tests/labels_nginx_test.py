#!/usr/bin/env python3
"""labels_nginx_test.py -- labels on a real nginx (the OpenResty example,
examples/openresty/) under wrk's load: every request labelled with its phase
and location (ljm_nginx.handle), the gateway's three plugins
(lua/gateway.lua) each under plugin = <name> (ljm_nginx.plugin). auth and
metrics make temporaries only; audit keeps a record of 2000 bytes and the
request's number per request (gateway.lua:27).

* Exact (time = true, the cheapest recording with labels): `ljm report --by
  plugin` ranks audit first with one block in use per /api request nginx
  served (its access log), its bytes per request within 10% of the truth
  (the record's characters, a string header and the array slot: 2000 +
  digits + 1 + 24 + 8); auth and metrics hold what the collector had not
  reached, a small share of audit's; --by location and --by phase give the
  requests' location (api) and phase (content); `go tool pprof
  -tagfocus=plugin=audit` holds audit's bytes in use and shows the line.
* Sampled at 512k with stacks, as for production: audit's estimate of bytes
  per request within 20% of the exact recording's (or three standard errors
  where the samples are too few for 20%), and pprof's tag says the same.

usage: labels_nginx_test.py LJM RECORDER_SO EXAMPLE_FILES..."""
import os
import re
import shutil
import subprocess
import sys

from checks import Checks
from nginxlib import Nginx, load_one_worker, make_prefix, scratch_top

import testlib

ljm, so = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
example = os.path.dirname(os.path.abspath([f for f in sys.argv[3:] if f.endswith("always.conf")][0]))
check = Checks("labels_nginx")
top = scratch_top()
ALWAYS = 'require("ljm_nginx").always{ flush = 1 }'


def run(name, opts, seconds):
    """nginx (one worker) recording with opts under wrk on /api; (stream,
    /api requests answered)."""
    prefix, (port, _) = make_prefix(top, name, example, so)
    conf = open(prefix + "always.conf").read()
    assert ALWAYS in conf and "worker_processes 2;" in conf
    conf = conf.replace(ALWAYS, 'require("ljm_nginx").always{ flush = 1, %s }' % opts)
    open(prefix + "always.conf", "w").write(conf.replace("worker_processes 2;", "worker_processes 1;"))
    ng = Nginx(prefix, "always.conf", testlib.module_env(so))
    if not check(ng.wait_ready(port, n=1), "%s: nginx up" % name):
        ng.quit()
        return None, 0
    streams = load_one_worker(check, name, prefix, ng, ["http://127.0.0.1:%d/api" % port], seconds)
    served = [line.split('"')[1] for line in open(prefix + "logs/access.log")]
    api = sum(1 for r in served if r.startswith("GET /api "))
    check(api > 1000 and api == len(served), "%s: /api answered %d times" % (name, api))
    return (streams[0] if streams else None), api


def by_table(stream, key):
    """ljm report --by KEY: value -> (in use, blocks, allocated, allocs, freed, frees)."""
    p = subprocess.run([ljm, "report", "--by", key, stream], capture_output=True, text=True)
    check(p.returncode == 0, "report --by %s: exit 0 (%r)" % (key, p.stderr[-300:]))
    m = re.search(r"^BY LABEL %s .*\n.*\n((?:.*\S.*\n)*)" % re.escape(key), p.stdout, re.M)
    rows = {}
    # exact recordings have a seventh column, the temporary allocations
    ncol = 7 if m and "temporary" in m.group(0).split("\n")[1] else 6
    for line in (m.group(1) if m else "").splitlines():
        f = line.split()
        if len(f) > ncol and f[0][0].isdigit():
            rows[" ".join(f[ncol:])] = tuple(float(x.rstrip("B")) for x in f[:6])
    return rows, p.stdout


def pprof_audit(stream, name):
    """go tool pprof -tagfocus=plugin=audit on the stream: (bytes in use, -top -lines text)."""
    pb = stream + ".pb.gz"
    p = subprocess.run([ljm, "convert", "-q", "-o", pb, stream], capture_output=True, text=True)
    check(p.returncode == 0, "%s: convert to pprof (%r)" % (name, p.stderr[-300:]))
    p = subprocess.run(["go", "tool", "pprof", "-top", "-lines", "-unit=B", "-nodefraction=0",
                        "-sample_index=inuse_space", "-tagfocus=plugin=audit", pb],
                       capture_output=True, text=True)
    m = re.search(r"^Showing nodes accounting for ([0-9.]+)B, ", p.stdout, re.M)
    check(p.returncode == 0 and m, "%s: go tool pprof -tagfocus=plugin=audit (%r)" % (name, p.stderr[-300:]))
    return (float(m.group(1)) if m else None), p.stdout


# -- Exact, time marks only -------------------------------------------------------
exact, api = run("exact", "time = true", 3)
per_request = None
if exact and api:
    rows, text = by_table(exact, "plugin")
    audit = rows.get("audit")
    check(audit and list(rows)[0] == "audit", "audit holds the most (%s)" % list(rows))
    check(audit and api <= audit[1] <= api + 10,  # and the array of records, a few more
          "audit: one block in use per /api request (%s blocks, %d requests)" % (audit and audit[1], api))
    digits = sum(len(str(n)) for n in range(1, api + 1)) / api
    truth = 2000 + digits + 1 + 24 + 8
    per_request = audit[0] / api if audit else 0
    check(abs(per_request / truth - 1) <= 0.1, "exact: audit keeps %.1f B per request, truth %.1f B"
          % (per_request, truth))
    print("exact: %d requests, audit %.1f B per request (truth %.1f)" % (api, per_request, truth))
    temps = [rows.get(k, (0,))[0] for k in ("auth", "metrics")]
    check("auth" in rows and "metrics" in rows and max(temps) < audit[0] / 10,
          "auth and metrics: temporaries, under a tenth of audit's in use (%s)" % temps)
    loc, _ = by_table(exact, "location")
    check(loc.get("api") and loc["api"][3] > 3 * api, "--by location: api's allocations (%s)" % (loc.get("api"),))
    phase, _ = by_table(exact, "phase")
    # (an allocation may fall between with_labels setting phase and location)
    check(phase.get("content") and abs(phase["content"][3] - loc["api"][3]) <= 10,
          "--by phase: the api allocations in the content phase (%s)" % (phase.get("content"),))
    inuse, top_text = pprof_audit(exact, "exact")
    check(inuse == audit[0], "exact: pprof's plugin=audit holds the report's %dB (%s)" % (audit[0], inuse))
    top_rows = [line for line in top_text.splitlines() if re.match(r"^\s*[0-9.]+B ", line)]
    check(top_rows and top_rows[0].endswith("/gateway.lua:27"),
          "exact: pprof's first line for plugin=audit is gateway.lua:27 (%r)" % top_rows[:2])

# -- Sampled at 512k with stacks ----------------------------------------------------
sampled, api = run("sampled", 'stacks = true, sample = "512k"', 6)
if sampled and api and per_request:
    rows, text = by_table(sampled, "plugin")
    audit = rows.get("audit")
    est = audit[0] / api if audit else 0
    samples = (audit[0] if audit else 0) / (512 * 1024)
    bound = max(0.2, 3 / max(samples, 1) ** 0.5)
    print("sampled: %d requests, audit %.1f B per request (exact %.1f), %.0f samples"
          % (api, est, per_request, samples))
    check(text.startswith("SAMPLED") and abs(est / per_request - 1) <= bound,
          "sampled 512k: audit %.1f B per request, exact %.1f, within %.0f%%"
          % (est, per_request, 100 * bound))
    inuse, _ = pprof_audit(sampled, "sampled")
    check(inuse and audit and abs(inuse - audit[0]) <= audit[0] * 0.005,
          "sampled: pprof's plugin=audit holds the report's estimate (%s, %s)" % (inuse, audit and audit[0]))

shutil.rmtree(top, ignore_errors=True)
sys.exit(check.done(minimum=14))
