#!/usr/bin/env python3
"""capi_test.py -- the C API: sinks, coroutines resumed from C, lua_close,
write errors, repeated recordings (streams written by capi_host)."""
import subprocess
import sys

import testlib

res = testlib.Results("capi")
host = testlib.runfile(sys.argv[1])
out = testlib.scratch("capi")
p = subprocess.run([host, out], capture_output=True, text=True, timeout=300)
sys.stdout.write(p.stdout)
sys.stderr.write(p.stderr)
res.check(p.returncode == 0, "capi_host exit status %d" % p.returncode)


def load(name):
    r, info = testlib.rows("%s/%s" % (out, name))
    return r, info


A, R, D = "ALLOCATIONS", "REALLOCATIONS", "DEALLOCATIONS"

r, info = load("cresume.ljm")
res.check(info["complete"], "cresume complete")
# Allocations of a coroutine resumed with lua_resume() belong to it ...
res.check(testlib.count(r, A, "=cbody:3") == 300, "lua_resume body line 3: 300 allocations")
# ... those of the host between resumes (outside the VM) are INTERNAL ...
res.check(testlib.count(r, A, "INTERNAL") >= 600, "host allocations between resumes are INTERNAL")
res.check(testlib.count(r, A, prefix="=cbody:") == 300, "nothing else charged to the coroutine")
# ... and coroutine.resume() from Lua works the same way.
res.check(testlib.count(r, A, "=lresume:3") == 100, "coroutine.resume body line 3: 100 allocations")

r, info = load("cfunc_resume.ljm")
res.check(info["complete"], "cfunc_resume complete")
res.check(testlib.count(r, A, prefix="c_driver:") == 50,
          "C function allocating after lua_resume() returned is charged to it")
res.check(testlib.count(r, A, prefix="=cfres:3") >= 1, "coroutine body line 3")

for name in ("writer.ljm", "fd.ljm"):
    r, info = load(name)
    res.check(info["complete"], name + " complete")
    res.check(testlib.count(r, A, "=churn:2") >= 1000000, name + ": 1e6 allocations at line 2")

r, info = load("writer_failed.ljm")
res.check(not info["complete"], "failed writer: stream cut (no epilogue)")
res.check(info["events"] > 100000, "failed writer: the accepted prefix decodes")

for k in range(5):
    r, info = load("again%d.ljm" % k)
    res.check(info["complete"] and testlib.count(r, A, "=again:1") >= 100,
              "repeated recording %d" % k)

r, info = load("close.ljm")
res.check(info["complete"], "lua_close() completes the stream")
res.check(testlib.count(r, A, "=closing:1") >= 100, "close.ljm events")
r, info = load("after_close.ljm")
res.check(info["complete"] and testlib.count(r, A, "=after:1") >= 1, "recording a second VM")
res.finish()
