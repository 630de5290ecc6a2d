#!/usr/bin/env python3
"""nginx_bench.py -- what recording costs a real nginx (Debian nginx-light +
libnginx-mod-http-lua, OpenResty's luajit2, JIT on) serving the OpenResty
example's /leak handler under wrk: requests/s without recording and with
each worker recording (examples/openresty/always.conf) to .ljm, .ljm.gz,
.ljm.zst and, with call stacks, .ljm.gz; and the stream bytes per request.
Prints figures, no pass/fail (target: recorded >= 0.75x unrecorded).

  python3 bench/nginx_bench.py [SECONDS [RUNS]]   (default 10 s, best of 3)

Builds //recorder:ljm/recorder.so with -c opt. Run on a quiet machine: wrk
and nginx's two workers share the cores."""
import os
import re
import shutil
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests"))
from nginxlib import Nginx, make_prefix, scratch_top, served, wrk  # noqa: E402

seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3

subprocess.run(["bazel", "build", "-c", "opt", "--symlink_prefix=/", "//recorder:ljm/recorder.so"],
               cwd=root, check=True, capture_output=True)
binp = subprocess.run(["bazel", "info", "-c", "opt", "bazel-bin"], cwd=root, check=True,
                      capture_output=True, text=True).stdout.strip()
so = os.path.join(binp, "recorder", "ljm", "recorder.so")
example = os.path.join(root, "examples", "openresty")
ALWAYS = 'require("ljm_nginx").always{ flush = 1 }'

# (label, what init_worker_by_lua_block runs instead of ALWAYS)
MODES = [
    ("not recorded", "-- not recorded"),
    ("recorded .ljm", 'require("ljm_nginx").always{ flush = 1, suffix = ".ljm" }'),
    ("recorded .ljm.gz", 'require("ljm_nginx").always{ flush = 1, suffix = ".ljm.gz" }'),
    ("recorded .ljm.zst", 'require("ljm_nginx").always{ flush = 1, suffix = ".ljm.zst" }'),
    ("stacks .ljm.gz", 'require("ljm_nginx").always{ flush = 1, suffix = ".ljm.gz", stacks = true }'),
    ("sampled 512k stacks .ljm.gz",
     'require("ljm_nginx").always{ flush = 1, suffix = ".ljm.gz", stacks = true, sample = "512k" }'),
]

top = scratch_top()
best = {}
per_req = {}
for run in range(runs):
    # Interleaved, and each run starts with another mode, so that drift and
    # a first run's warm-up hit every mode alike.
    for label, init in MODES[run % len(MODES):] + MODES[:run % len(MODES)]:
        prefix, (port, _) = make_prefix(top, "r%d" % run + re.sub(r"\W", "", label), example, so)
        conf = open(prefix + "always.conf").read()
        assert ALWAYS in conf
        open(prefix + "always.conf", "w").write(conf.replace(ALWAYS, init))
        ngx = Nginx(prefix, "always.conf")
        if not ngx.wait_ready(port):
            sys.exit("nginx did not start: %s" % prefix)
        p, nreq = wrk(port, "/leak", seconds)
        rate = float(re.search(r"Requests/sec:\s*([\d.]+)", p.stdout).group(1))
        ngx.quit()
        size = sum(os.path.getsize(prefix + "ljm/" + f) for f in os.listdir(prefix + "ljm"))
        n = served(prefix, "/leak")
        best[label] = max(best.get(label, 0), rate)
        per_req[label] = size / n if n else 0
        shutil.rmtree(prefix)
shutil.rmtree(top)

base = best["not recorded"]
print("nginx /leak, 2 workers, wrk -t2 -c16 -d%ds, best of %d" % (seconds, runs))
print("%-20s %12s %8s %14s" % ("mode", "requests/s", "ratio", "bytes/request"))
for label, _ in MODES:
    print("%-20s %12.0f %8.2f %14.1f" % (label, best[label], best[label] / base, per_req[label]))
