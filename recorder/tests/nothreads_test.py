#!/usr/bin/env python3
"""nothreads_test.py -- a host that cannot make threads (pthread_create
fails: tests/nothreads_shim.c preloaded): ljm record --stacks still writes
a whole stream, exact and sampled, on the VM's thread, and so does --time, and its time marks
and RSS samples keep their promises without the ticker (the events read
the clock). Plain builds only: under ASan the executable's own
pthread_create interceptor comes before any preloaded one.
usage: nothreads_test.py LJM_RECORD SHIM_SO"""
import os
import subprocess
import sys

import testlib

import ljmread  # tests/lib/ljmread.py, the shared stream reader

res = testlib.Results("nothreads")
record = testlib.runfile(sys.argv[1])
shim = testlib.runfile(sys.argv[2])
busy = testlib.runfile(sys.argv[3])  # testdata/recorder/stacks/busy.lua
work = testlib.scratch("nothreads")

env = testlib.vm_env()
env["LD_PRELOAD"] = ":".join(filter(None, [env.get("LD_PRELOAD"), shim]))
for mode, argv in (("exact", ["--stacks"]),
                   ("sampled", ["--stacks", "--sample", "4k", "--sample-seed", "5"]),
                   ("time", ["--time"])):
    out = "busy_%s.ljm" % mode
    p = subprocess.run([record] + argv + ["-o", out, busy, "1.0", "probe"],
                       capture_output=True, text=True, cwd=work, env=env, timeout=300)
    got = p.stdout.split()
    res.check(p.returncode == 0 and got[1:] == ["1", "11"],
              "%s: the script runs in one thread, pthread_create fails with EAGAIN (%d %r %r)"
              % (mode, p.returncode, p.stdout, p.stderr[-300:]))
    path = os.path.join(work, out)
    st = ljmread.parse(open(path, "rb").read()) if os.path.exists(path) else None
    res.check(st is not None and st.complete and not st.problems and st.events,
              "%s: a whole stream with its events (%r)" % (mode, st and st.problems))
    if st is not None:
        probs = ljmread.check_busy(st, min_gap_us=5000)
        res.check(not probs, "%s: without a ticker, a mark every 5 ms or more and RSS every 100 ms "
                  "over a second: %s" % (mode, probs))
res.finish()
