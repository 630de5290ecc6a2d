#!/usr/bin/env python3
"""threads_test.py -- two lua_States recording from two threads (threads_host.c)
on the VM under test: one recording per process, the other state refused
with "another Lua state in this process is recording" (EBUSY); one state's
stop() and is_running() never reach the other's recording; every stream
written is complete with its events. Then the same program with the
recorder built under ThreadSanitizer: no report.
usage: threads_test.py THREADS_HOST THREADS_HOST_TSAN"""
import glob
import os
import subprocess
import sys

import testlib

res = testlib.Results("threads")
host, tsan = (testlib.runfile(a) for a in sys.argv[1:3])


def events_at_line3(path):
    r, info = testlib.rows(path)
    n = sum(sum(c) for (s, name), c in r.items() if s == "ALLOCATIONS" and name.endswith(":3"))
    return info["complete"], n


def run(binary, name, iters, env):
    out = testlib.scratch(name)
    for f in glob.glob(os.path.join(out, "*.ljm")):
        os.remove(f)
    p = subprocess.run([binary, out, str(iters)], capture_output=True, text=True,
                       env=env, timeout=600)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr[-4000:])
    res.check(p.returncode == 0 and "FAIL" not in p.stdout,
              "%s: exit %d, host checks pass" % (name, p.returncode))
    res.check("ThreadSanitizer" not in p.stderr, "%s: no ThreadSanitizer report" % name)
    said = [line.split() for line in p.stdout.splitlines() if line.startswith("started")]
    started = int(said[0][1]) + int(said[0][2]) if said else -1
    refused = int(said[0][4]) + int(said[0][5]) if said else -1
    res.check(started + refused == 2 * iters and started > 0,
              "%s: every start recorded or refused: %r" % (name, said))
    complete, n = events_at_line3(os.path.join(out, "a.ljm"))
    res.check(complete and 2000 <= n <= 2005, "%s: A's stream whole across B's stop(): %s %d" % (name, complete, n))
    complete, n = events_at_line3(os.path.join(out, "b.ljm"))
    res.check(complete and 500 <= n <= 505, "%s: B records once A stopped: %s %d" % (name, complete, n))
    streams = glob.glob(os.path.join(out, "t*.ljm"))
    res.check(len(streams) == started, "%s: a stream per started recording (%d, %d)"
              % (name, len(streams), started))
    bad = [(s, events_at_line3(s)) for s in streams]
    bad = [b for b in bad if not (b[1][0] and 300 <= b[1][1] <= 305)]
    res.check(not bad, "%s: every stream complete with its 300 events: %s" % (name, bad[:3]))


env = testlib.vm_env()
run(host, "threads", 200, env)
env["TSAN_OPTIONS"] = "halt_on_error=1:exitcode=66"
run(tsan, "threads_tsan", 40, env)
res.finish()
