#!/usr/bin/env python3
"""capi_test.py -- the C API: sinks, coroutines resumed from C, lua_close,
write errors, repeated recordings (streams written by capi_host)."""
import os
import subprocess
import sys

import testlib

import ljmread  # tests/lib/ljmread.py, the shared stream reader

res = testlib.Results("capi")
host = testlib.runfile(sys.argv[1])
out = testlib.scratch("capi")
p = subprocess.run([host, out], capture_output=True, text=True, timeout=300,
                   env=testlib.vm_env())
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

# Extended streams: a coroutine resumed by a C function (lua_resume) sits
# on that function's frame; one the host resumes ends in the boundary.
def ext(name):
    st = ljmread.parse(open("%s/%s" % (out, name), "rb").read())
    res.check(st.complete and st.flags == 3 | ljmread.TYPES, name + ": complete, flags STACKS|TIME|TYPES")
    res.check(not st.problems, name + ": follows EXTENSION.md: %s" % st.problems[:5])
    return st.chains(1)


ch = ext("stacks.ljm")
want = ("=cstk:3", "CORO", "C:c_resumer", "=cstk:6", "=cstk:7")
res.check(ch.get(want, 0) == 100, "lua_resume from C: %s x100 (%d)" % (want, ch.get(want, 0)))
res.check(ch.get(("=hbody:3", "CORO"), 0) == 50, "host-resumed coroutine ends in the boundary")
ch = ext("stacks3.ljm")
want = ("=cstk:3", "CORO", "C:c_resumer", "TRUNC")
res.check(ch.get(want, 0) == 100, "depth 3: %s x100 (%d)" % (want, ch.get(want, 0)))
res.check(ch.get(("=hbody:3", "CORO"), 0) == 50, "depth 3: short stacks are not cut")
st = ljmread.parse(open(out + "/stacks_std.ljm", "rb").read())
res.check(st.complete and st.flags == 0 and not st.nodes and not st.marks,
          "a standard recording alongside stays standard")
r, info = load("stacks_std.ljm")
res.check(testlib.count(r, A, "=cstk:3") == 100, "standard stream: 100 allocations at =cstk:3")
# The sampled recording: flags STACKS | TIME | SAMPLED, the rate 4096 first,
# complete, and a small part of the 100000 tables written.
with open(os.path.join(out, "sampled.ljm"), "rb") as f:
    data = f.read()
res.check(b"ljm\x03\x0f\x00\x00\x30\x80\x20" in data and data.endswith(b"\x80"),
          "sampled.ljm: SAMPLED flag, rate 4096 first, complete")
# 100000 tables (200000 events) exactly would take 2 MB beyond the leading
# symbol table (what plain_first.ljm, which recorded nothing, holds).
extra = len(data) - os.path.getsize(os.path.join(out, "plain_first.ljm"))
res.check(extra < 200000, "sampled.ljm: %d bytes of events, a sample of them" % extra)

# Labels set through the C API, on a coroutine of the host's and pushed on
# the main thread: each allocation carries its coroutine's set.
with open(os.path.join(out, "labels.ljm"), "rb") as f:
    st = ljmread.parse(f.read())
sets = {i: dict(v) for i, v in st.label_sets.items() if v}
by = {}
for e in st.events:
    if e.ev == 1 and e.labels in sets:
        key = tuple(sorted(sets[e.labels].items()))
        by.setdefault(key, {}).setdefault(e.name.split(":")[0], 0)
        by[key][e.name.split(":")[0]] += 1
c = by.get(((b"plugin", b"c"),), {})
auth = by.get(((b"plugin", b"auth"), (b"route", b"/x")), {})
res.check(st.complete and not st.problems, "labels.ljm: complete (%s)" % st.problems[:2])
# (and the parser's work loading each chunk, INTERNAL, on the same thread)
res.check(c.get("=clabels", 0) >= 200 and set(c) <= {"=clabels", "INTERNAL"},
          "the coroutine's 200 tables under plugin=c, no other line (%s)" % c)
res.check(auth.get("=plabels", 0) >= 300 and set(auth) <= {"=plabels", "INTERNAL"},
          "the pushed labels on the main thread's 300 tables, no other line (%s)" % auth)
res.finish()
