#!/usr/bin/env python3
"""module_test.py -- require "ljm.recorder" from stock luajit (the VM under
test, testlib.VM): the build it picks, return values, errors, no truncation
on failed start, /dev/full, repeated recordings, os.exit() with a recording
running, finalizers that start and stop recordings from inside a start.
usage: module_test.py SOFILE MODULE_API_LUA"""
import os
import re
import subprocess
import sys

import testlib

res = testlib.Results("module")
so = testlib.runfile(sys.argv[1])
script = testlib.runfile(sys.argv[2])
out = testlib.scratch("module")
env = testlib.module_cpath(so, "module_cpath")
p = subprocess.run([testlib.LUAJIT, script, out], capture_output=True, text=True,
                   env=env, timeout=300)
sys.stdout.write(p.stdout)
sys.stderr.write(p.stderr)
res.check(p.returncode == 0, "module_api.lua exit status %d" % p.returncode)
b = subprocess.run([testlib.LUAJIT, "-e", 'print(require("ljm.recorder").build())'],
                   capture_output=True, text=True, env=env, timeout=60)
res.check(testlib.build_is_vm_flavour(b.stdout) and (", GC64)" in b.stdout) == testlib.vm_gc64(),
          "build() names the VM's flavour: %r" % (b.stdout + b.stderr))
res.check("module_api: ok" in p.stdout, "module_api.lua checks")

# Hosts that misbehave (module_finalizers.lua, beside module_api.lua):
# finalizers that stop and start recordings, run by a GC step inside a
# start, are refused, never a wait for ever on the lock the start holds;
# a host that puts the recorder's wrapper back after a stop gets a working
# start, not a wrapper wrapped in itself.
fin = os.path.join(os.path.dirname(script), "module_finalizers.lua")
try:
    f = subprocess.run([testlib.LUAJIT, fin, out, "300"], capture_output=True, text=True,
                       env=env, timeout=120)
    m = re.search(r"module_finalizers: (\d+) refused \(EDEADLK\), (\d+) not, running false",
                  f.stdout)
    # Where a finalizer runs depends on the VM's GC pacing: on Debian 12's
    # two VMs (the system's and the trees') some run inside a start.
    must_hit = os.environ.get("LJM_TEST_FLAVOUR") in (None, "luajit", "luajit2")
    res.check(f.returncode == 0 and m and (int(m.group(1)) > 0 or not must_hit),
              "finalizers inside a start are refused: exit %d, %r"
              % (f.returncode, (f.stdout + f.stderr)[-300:]))
    res.check("module_finalizers: wrapper put back: ok" in f.stdout,
              "a start after the host put the recorder's wrapper back: %r" % f.stdout[-300:])
except subprocess.TimeoutExpired:
    res.check(False, "finalizers inside a start: the program hung (a deadlock)")

# A guest in its host: the module exports its entry point only, and brings
# no C++ runtime into a host that has none.
d = subprocess.run(["readelf", "-d", "--dyn-syms", "-W", so], capture_output=True, text=True)
needed = re.findall(r"\bNEEDED\b.*\[(.+)\]", d.stdout)
exports = sorted({f[7] for f in (ln.split() for ln in d.stdout.splitlines())
                  if len(f) >= 8 and f[0][:-1].isdigit() and f[6] != "UND" and f[4] != "LOCAL"})
LIBS = {"libc.so.6", "libm.so.6", "libz.so.1", "libzstd.so.1"}
res.check(d.returncode == 0 and "libc.so.6" in needed
          and all(n in LIBS or "san" in n or "clang_rt" in n for n in needed),
          "the module needs libc, libm, zlib and libzstd only, no libstdc++: %r" % (needed or d.stderr))
res.check(exports == ["luaopen_ljm_recorder"], "the module exports luaopen_ljm_recorder only: %r" % exports)

A = "ALLOCATIONS"
r, info = testlib.rows(out + "/module.ljm")
res.check(info["complete"], "module.ljm complete")
name = "@" + script + ":28"
res.check(500 <= testlib.count(r, A, name) <= 505, "500 allocations at %s: %d" % (name, testlib.count(r, A, name)))
for k in range(1, 6):
    r, info = testlib.rows("%s/cycle%d.ljm" % (out, k))
    res.check(info["complete"] and 100 <= testlib.count(r, A, "@" + script + ":43") <= 105,
              "cycle %d: 100 allocations at line 43" % k)
r, info = testlib.rows(out + "/after_full.ljm")
res.check(info["complete"], "recording after a write error")
r, info = testlib.rows(out + "/atexit.ljm")
res.check(info["complete"], "os.exit() completes a running recording")
res.check(100 <= testlib.count(r, A, "@" + script + ":61") <= 105, "atexit.ljm events")
res.check(open(out + "/keep.txt").read() == "precious", "keep.txt untouched")
res.finish()
