#!/usr/bin/env python3
"""growth_nginx_test.py -- `ljm growth` on a real nginx (the OpenResty example,
examples/openresty/) under wrk's load, recorded as the example's README says
for production: sampled with stacks.

One worker serves /leak (keeps a ~100-byte record per request: app.lua:11),
/lru (resty.lrucache of 1000 items, filled in the first second, then only
replacing) and /work (temporaries only), in turns, for 20 s, recorded with
one byte in 512 KiB, and again with one in 64 KiB. Each time:

* the leaking line is the first line `ljm growth` lists (JIT on: the trace
  that runs M.leak, named after it), and its stack;
* its slope against the true bytes/s: the bytes one /leak request keeps on
  that row, from an exact recording of the same nginx (ljm report's heap
  summary over the requests nginx served), times the /leak requests per
  second of nginx's access log (with $msec). 64 KiB: within 20%. 512 KiB:
  within 20%, or three standard errors where its samples are too few for
  that (20 s of ~100-byte leaks hold 50-100 samples: 1/sqrt(n) is 10-14%);
* nothing of /lru, /work or resty.lrucache is listed;
* --fail-above below the leak's rate exits 3, above it 0.

Built with sanitizers (--config=asan) the worker is slower and the figures
wander further: the 64 KiB slope measured +2..+17% high in six runs (a bias
not yet explained), and a /work trace was listed once (garbage the
collector leaves grows with the leaking heap, and once ranked first, tied
with the leak). There the test checks that nginx records, answers and ljm
growth reads the streams and finds the leak among the first three lines and
stacks; the slopes, the order and the other lines are printed, and asserted
in the plain build.

usage: growth_nginx_test.py LJM RECORDER_SO EXAMPLE_FILES..."""
import json
import os
import re
import shutil
import subprocess
import sys

from checks import Checks
from nginxlib import Nginx, load_one_worker, make_prefix, scratch_top

# testlib (tests/lib): the environment that loads the module into nginx
# (with --config=asan, the sanitizer runtime preloaded).
import testlib

ljm, so = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SANITIZED = b"__asan_init" in open(so, "rb").read()
example = os.path.dirname(os.path.abspath([f for f in sys.argv[3:] if f.endswith("always.conf")][0]))
check = Checks("growth_nginx")
top = scratch_top()
SECONDS = 20
ALWAYS = 'require("ljm_nginx").always{ flush = 1 }'

# wrk's requests in turns: /leak, /lru, /leak, /work, ...
ROTATE = """local paths = {"/leak", "/lru", "/leak", "/work"}
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
"""


def prefix_for(name, init):
    """A prefix with one worker recording as init says, and an access log
    of times (msec) and paths."""
    prefix, (port, _) = make_prefix(top, name, example, so)
    conf = open(prefix + "always.conf").read()
    assert ALWAYS in conf and "worker_processes 2;" in conf and "access_log logs/access.log;" in conf
    conf = conf.replace(ALWAYS, init).replace("worker_processes 2;", "worker_processes 1;")
    conf = conf.replace("access_log logs/access.log;",
                        "log_format times '$msec $request_uri $status';\n"
                        "    access_log logs/access.log times;")
    open(prefix + "always.conf", "w").write(conf)
    open(prefix + "rotate.lua", "w").write(ROTATE)
    return prefix, port


def figure(ok, what):
    """A check of the figures: asserted in the plain build, printed under
    sanitizers (see the docstring)."""
    if not SANITIZED:
        return check(ok, what)
    print("%s (sanitized build, not asserted): %s" % ("ok" if ok else "OFF", what))
    return ok


def run(name, init, seconds):
    """nginx recording under wrk for seconds; (prefix, stream, leak request times)."""
    prefix, port = prefix_for(name, init)
    ng = Nginx(prefix, "always.conf", testlib.module_env(so))
    if not check(ng.wait_ready(port, n=1), "%s: nginx up" % name):
        ng.quit()
        return prefix, None, []
    streams = load_one_worker(check, name, prefix, ng,
                              ["-s", prefix + "rotate.lua", "http://127.0.0.1:%d/" % port], seconds)
    leaks, bad = [], 0
    for line in open(prefix + "logs/access.log"):
        t, uri, status = line.split()
        bad += status != "200"
        if uri == "/leak":
            leaks.append(float(t))
    check(bad == 0 and leaks, "%s: every request answered (%d failed, %d /leak)"
             % (name, bad, len(leaks)))
    return prefix, streams[0] if streams else None, leaks


# -- The truth: bytes one /leak request keeps, from an exact recording --------
# JIT on, the handler runs as a trace that starts in M.leak: its row holds the
# records of the requests the trace served; the first requests (until M.leak
# is hot) keep theirs on line 11's own row, with the array that lists them
# (which grows by doublings: not a steady line). The trace row's bytes per
# request it served: its blocks per record, k, is what both rows made per
# /leak request (the array's dozen reallocations apart), so the trace served
# its allocations / k requests. (Per /leak request of the whole run instead,
# the warm-up of a short exact run, a tenth of it under ASan's slow worker,
# would make every slope look too steep.)
prefix, exact, leaks = run("exact", 'require("ljm_nginx").always{ flush = 1, stacks = true }', 4)
per_request = {}
if exact and leaks:
    p = subprocess.run([ljm, "report", "--leak-only", exact], capture_output=True, text=True)
    app = re.escape(prefix + "lua/app.lua")
    rows = {}
    for kind, row in (("trace", r"^TRACE \[\d+\] started at @%s:(?:9|1[0-2]) holds (\d+)B: (\d+) allocs"
                       % app), ("line", r"^@%s:11 holds (\d+)B: (\d+) allocs" % app)):
        found = [(int(m.group(1)), int(m.group(2))) for m in re.finditer(row, p.stdout, re.M)]
        rows[kind] = (sum(b for b, _ in found), sum(a for _, a in found))
        per_request[kind] = rows[kind][0] / len(leaks)
    check(p.returncode == 0 and 100 <= per_request["trace"] + per_request["line"] <= 200,
          "exact: about 100 bytes kept per /leak request (%s; %r)" % (per_request, p.stdout[-600:]))
    k = max(1, round((rows["trace"][1] + rows["line"][1]) / len(leaks)))
    if rows["trace"][1]:
        per_request["trace"] = rows["trace"][0] * k / rows["trace"][1]
    print("exact: %d /leak requests, %d block(s) each; the trace served %d: %.1f B each, line 11 "
          "%.1f B per request" % (len(leaks), k, rows["trace"][1] // k, per_request["trace"],
                                  per_request["line"]))


def growth_of(name, sample, rotation):
    """ljm growth of a sampled recording: (first row, its relative error
    against the truth, the samples it rests on)."""
    prefix, sampled, leaks = run(name, 'require("ljm_nginx").always{ flush = 1, stacks = true, '
                                 'sample = "%s" }' % sample, SECONDS)
    if not (sampled and leaks and per_request):
        return None
    p = subprocess.run([ljm, "growth", "--skip", "2s", "--json", "--top", "50", sampled],
                       capture_output=True, text=True)
    check(p.returncode == 0, "%s: ljm growth: exit 0 (%s, %r)" % (name, p.returncode, p.stderr))
    try:
        g = json.loads(p.stdout)
    except ValueError:
        check(False, "%s: ljm growth --json: JSON (%r)" % (name, p.stdout[:300]))
        return None
    lines = g["lines"]
    first = lines[0] if lines else {"line": ""}
    # The line, or (JIT on) the trace that runs M.leak, named after it.
    leak_row = r"^M\.leak \(app\.lua:11\)$|^TRACE \[\d+\] app\.lua:(9|1[0-2]) \(in M\.leak\)$"
    shown = [(l["line"], l["bytes_per_s"]) for l in lines[:5]]
    if SANITIZED:  # a /work trace has tied with the leak there (927 and 918 KB/s): in the top 3
        leak = [l for l in lines[:3] if re.match(leak_row, l["line"])]
        figure(re.match(leak_row, first["line"]), "%s: the leaking line first (%s)" % (name, shown))
        if not check(leak, "%s: the leaking line in the first three (%s)" % (name, shown)):
            return None
        first = leak[0]
    elif not check(re.match(leak_row, first["line"]), "%s: the leaking line first (%s)"
                   % (name, shown)):
        return None
    kind = "trace" if first["line"].startswith("TRACE") else "line"
    # The /leak requests per second of the stretch growth fits (after its
    # --skip 2s; the recording starts about when the load does): a worker
    # that serves the first seconds slower (ASan's) leaks slower then.
    late = [t for t in leaks if t >= leaks[0] + 2]
    whole_rate = per_request[kind] * len(leaks) / (leaks[-1] - leaks[0])
    true_rate = per_request[kind] * (len(late) - 1) / (late[-1] - late[0])
    print("%s: /leak requests per second %.0f over the whole run, %.0f after its first 2 s"
          % (name, len(leaks) / (leaks[-1] - leaks[0]), (len(late) - 1) / (late[-1] - late[0])))
    err = first["bytes_per_s"] / true_rate - 1
    samples = first["in_use"] / g["sample_rate"]
    print("%s: slope %.0f B/s, true %.0f B/s (%.1f B x %d requests in %.1f s): %+.1f%%, %.0f samples"
          % (name, first["bytes_per_s"], true_rate, per_request[kind], len(leaks),
             leaks[-1] - leaks[0], 100 * err, samples))
    stacks = g["stacks"]
    top = stacks[:3] if SANITIZED else stacks[:1]
    check(any("M.leak (app.lua)" in s["frames"] for s in top),
          "%s: the leaking stack first%s (%s)" % (name, " three" if SANITIZED else "",
                                                  [s["frames"] for s in top]))
    others = [l["line"] for l in lines if not re.match(leak_row, l["line"])]
    figure(not [o for o in others if re.search(r"lru|work|app\.lua", o)],
           "%s: /lru, /work and resty.lrucache not listed (%s)" % (name, others))
    others = [s["frames"] for s in stacks if any(re.search(r"lru|work", f) for f in s["frames"])]
    figure(not others, "%s: no stack through /lru or /work listed (%s)" % (name, others[:2]))
    # The text view says the same, and --fail-above decides on the slope.
    t = subprocess.run([ljm, "growth", "--skip", "2s", sampled], capture_output=True, text=True)
    check(t.returncode == 0 and ("(in M.leak)" in t.stdout or "M.leak (app.lua:11)" in t.stdout),
          "%s: text view: the line (%r)" % (name, t.stdout[-500:]))
    low = subprocess.run([ljm, "growth", "--skip", "2s", "--fail-above", "%dB/s" % (true_rate / 4),
                          sampled], capture_output=True, text=True)
    check(low.returncode == 3 and "faster than --fail-above" in low.stderr,
          "%s: --fail-above a quarter of the leak: exit 3 (%s, %r)" % (name, low.returncode, low.stderr))
    high = subprocess.run([ljm, "growth", "--skip", "2s", "--fail-above",
                           "%dKB/s" % (true_rate / 256), sampled], capture_output=True, text=True)
    check(high.returncode == 0, "%s: --fail-above 4x the leak: exit 0 (%s, %r)"
          % (name, high.returncode, high.stderr))
    return err, samples


# As the README recommends for production: one byte in 512 KiB. Its slope
# rests on the few samples of 20 s (about 50-100): within 20% where they
# allow it, else within three standard errors (1 / sqrt(samples)).
res = growth_of("sampled-512k", "512k", ROTATE)
if res:
    err, samples = res
    bound = max(0.2, 3 / samples ** 0.5)
    figure(abs(err) <= bound, "512k: slope within %.0f%% of the truth (%+.1f%%, %.0f samples)"
           % (100 * bound, 100 * err, samples))
# One byte in 64 KiB: eight times the samples, and 20% is four standard errors.
res = growth_of("sampled-64k", "64k", ROTATE)
if res:
    err, samples = res
    figure(abs(err) <= 0.2, "64k: slope within 20%% of the truth (%+.1f%%, %.0f samples)"
           % (100 * err, samples))

shutil.rmtree(top, ignore_errors=True)
sys.exit(check.done(minimum=10))
