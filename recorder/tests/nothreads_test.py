#!/usr/bin/env python3
"""nothreads_test.py -- a host that cannot make threads (pthread_create
fails: tests/nothreads_shim.c preloaded): ljm record --stacks still writes
a whole stream, exact and sampled, on the VM's thread, and its time marks
and RSS samples keep their promises without the ticker (the events read
the clock). Plain builds only: under ASan the executable's own
pthread_create interceptor comes before any preloaded one.
usage: nothreads_test.py LJM_RECORD SHIM_SO"""
import os
import subprocess
import sys

import testlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests"))
import ljmread  # noqa: E402  (tests/ljmread.py, the shared stream reader)

res = testlib.Results("nothreads")
record = testlib.runfile(sys.argv[1])
shim = testlib.runfile(sys.argv[2])
work = testlib.scratch("nothreads")

# Allocates for about a second; says how many threads the process has, and
# whether a thread could be made at all (ffi: pthread_create of a no-op).
BUSY = """local ffi = require("ffi")
ffi.cdef[[typedef struct { char b[64]; } attr_t;
int pthread_create(unsigned long *th, const attr_t *a, void *(*fn)(void *), void *arg);]]
jit.off()
local keep, i, t0, threads = {}, 0, os.clock(), nil
while os.clock() - t0 < 1.0 do
  i = i + 1
  keep[i % 50000] = {i, tostring(i)}
  if not threads and os.clock() - t0 > 0.5 then
    threads = io.open("/proc/self/status"):read("*a"):match("Threads:%s*(%d+)")
  end
end
local th = ffi.new("unsigned long[1]")
local cb = ffi.cast("void *(*)(void *)", function() return nil end)
print(threads, ffi.C.pthread_create(th, nil, cb, nil))
"""
with open(os.path.join(work, "busy.lua"), "w") as f:
    f.write(BUSY)

env = testlib.vm_env()
env["LD_PRELOAD"] = ":".join(filter(None, [env.get("LD_PRELOAD"), shim]))
for mode, argv in (("exact", []), ("sampled", ["--sample", "4k", "--sample-seed", "5"])):
    out = "busy_%s.ljm" % mode
    p = subprocess.run([record, "--stacks"] + argv + ["-o", out, "busy.lua"], capture_output=True,
                       text=True, cwd=work, env=env, timeout=300)
    got = p.stdout.split()
    res.check(p.returncode == 0 and got == ["1", "11"],
              "%s: the script runs in one thread, pthread_create fails with EAGAIN (%d %r %r)"
              % (mode, p.returncode, p.stdout, p.stderr[-300:]))
    path = os.path.join(work, out)
    st = ljmread.parse(open(path, "rb").read()) if os.path.exists(path) else None
    res.check(st is not None and st.complete and not st.problems and st.events,
              "%s: a whole stream with its events (%r)" % (mode, st and st.problems))
    if st is None:
        continue
    probs = ljmread.check_time(st)
    res.check(not probs, "%s: time marks and RSS samples without a ticker: %s" % (mode, probs))
    gaps = [b[1] - a[1] for a, b in zip(st.marks, st.marks[1:])]
    res.check(len(st.marks) >= 100 and st.marks[-1][1] >= 900000 and len(st.rss) >= 8
              and gaps and min(gaps) >= 5000,
              "%s: a mark every 5 ms or more, RSS every 100 ms, over a second (%d marks, "
              "smallest gap %s us, %d RSS)" % (mode, len(st.marks), min(gaps) if gaps else None,
                                               len(st.rss)))
res.finish()
