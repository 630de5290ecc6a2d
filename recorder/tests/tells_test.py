#!/usr/bin/env python3
"""tells_test.py -- the build-match check picks the VM's own build by its
layouts alone: with the jit library not loaded (no version string), only
the builds with the VM's layouts accept it (Debian 13's and sid's
OpenResty have the same); with it loaded, only the VM's own build. And the
refusal names the VM and says what to do (ljm record, the module).
usage: tells_test.py TELLS_HOST LJM_RECORD RECORDER_SO"""
import os
import subprocess
import sys

import testlib

# Trees whose layouts are equal on x86_64 (luajit-builds.md §6).
TWINS = [{"luajit_trixie", "luajit_sid"}]

res = testlib.Results("tells")
host, tool, so = (testlib.runfile(a) for a in sys.argv[1:4])
vm = testlib.vm_flavour() if testlib.VM else None
p = subprocess.run([host], capture_output=True, text=True, timeout=60, env=testlib.vm_env())
sys.stdout.write(p.stdout)
sys.stderr.write(p.stderr)
res.check(p.returncode == 0, "tells_host exit status %d" % p.returncode)
seen = {}
for line in p.stdout.splitlines():
    phase, name, verdict = line.split(" ", 3)[:3]
    seen[(phase, name)] = verdict
names = sorted({n for _, n in seen})
res.check(len(names) >= 2 and all(("jit", n) in seen for n in names),
          "every build asked in both phases: %s" % names)
if vm:
    for n in names:
        twin = any(n in t and vm in t for t in TWINS)
        res.check(seen[("nojit", n)] == ("accept" if n == vm or twin else "refuse"),
                  "without jit, build %s %ss the %s VM" % (n, seen[("nojit", n)], vm))
        res.check(seen[("jit", n)] == ("accept" if n == vm else "refuse"),
                  "with jit, build %s %ss the %s VM" % (n, seen[("jit", n)], vm))
else:  # the system's LuaJIT: some build accepts it in both phases
    res.check(any(v == "accept" for (ph, _), v in seen.items() if ph == "nojit") and
              any(v == "accept" for (ph, _), v in seen.items() if ph == "jit"),
              "a build accepts the system's LuaJIT")
res.finish()
