#!/usr/bin/env python3
"""refusal_test.py -- a VM no build of the recorder knows (Debian 12's
luajit built without GC64) gets a refusal a user can act on, in the same
words from ljm record, the module's start() and build(): the running VM
(version, GC64 or not, its library), the builds compiled in, the command
that builds a recorder for its tree.
usage: refusal_test.py VM_LUAJIT LJM_RECORD RECORDER_SO"""
import os
import subprocess
import sys

import testlib

res = testlib.Results("refusal")
vm, tool, so = (testlib.runfile(a) for a in sys.argv[1:4])
lib = os.path.dirname(vm)
env = dict(os.environ, LD_LIBRARY_PATH=lib)
work = testlib.scratch("refusal")
script = os.path.join(work, "s.lua")
open(script, "w").write("local t = {} for i = 1, 100 do t[i] = {} end\n")

builds = subprocess.run([tool, "-"], input='for _, b in ipairs(require("ljm.recorder").builds()) '
                        'do print(b) end', capture_output=True, text=True, timeout=60).stdout
builds = [b for b in builds.splitlines() if b]
res.check(len(builds) >= 2 and builds[0].startswith("Debian 12 luajit "),
          "rec.builds() lists the builds compiled in: %r" % builds)


def says_what_to_do(msg, who):
    want = ["this LuaJIT is not one the recorder was built for: LuaJIT 2.1.0-beta3, not GC64, in ",
            lib, "; built for: " + "; ".join(builds) + ".",
            "To record it, build ljmkit for its source tree: bazel build "
            "--repo_env=LJM_EXTRA_TREE=/path/to/its/source //:ljm //recorder:ljm/recorder.so"]
    missing = [w for w in want if w not in msg]
    res.check(not missing, "%s: %r lacks %r" % (who, msg, missing))


# ljm record on that VM: refused before the script runs, non-zero exit.
p = subprocess.run([tool, "-o", os.path.join(work, "s.ljm"), script], capture_output=True,
                   text=True, timeout=60, env=env)
res.check(p.returncode != 0 and not os.path.exists(os.path.join(work, "s.ljm")),
          "ljm record refuses (exit %d), no file" % p.returncode)
res.check(p.stderr.startswith("ljm record: this LuaJIT"), "one message: %r" % p.stderr)
says_what_to_do(p.stderr, "ljm record")

# The module inside that VM's own luajit: start() and build().
menv = testlib.module_cpath(so, "refusal_cpath")
menv["LD_LIBRARY_PATH"] = lib
code = ('local rec = require("ljm.recorder")\n'
        'local ok, msg, errno = rec.start("%s")\n'
        'print("start", tostring(ok), errno) print(msg)\n'
        'local b, why = rec.build() print("build", tostring(b)) print(why)\n'
        % os.path.join(work, "m.ljm"))
p = subprocess.run([vm, "-e", code], capture_output=True, text=True, timeout=60, env=menv)
out = p.stdout.splitlines()
res.check(p.returncode == 0 and len(out) == 4 and out[0].startswith("start\tnil\t")
          and out[2] == "build\tnil", "module: start and build return nil: %r" % (p.stdout + p.stderr))
if len(out) == 4:
    says_what_to_do(out[1], "module start()")
    res.check(out[1] == out[3], "the same words from build()")
res.finish()
