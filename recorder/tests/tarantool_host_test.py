#!/usr/bin/env python3
"""tarantool_host_test.py -- a real program on a LuaJIT of its own:
Debian 12's tarantool (2.6, its LuaJIT fork linked in) loads the module,
which picks the build made from that fork's source, and records a box
application, standard and with stacks; the line counts are checked.
usage: tarantool_host_test.py RECORDER_SO LJM APP_LUA (LJM_TEST_LABEL: the build)"""
import os
import shutil
import subprocess
import sys

import testlib

import ljmread  # tests/lib/ljmread.py, the shared stream reader

res = testlib.Results("tarantool_host")
so, ljm, app = (testlib.runfile(a) for a in sys.argv[1:4])
label = os.environ["LJM_TEST_LABEL"]
env = testlib.module_cpath(so, "tt_cpath")
for mode in ("standard", "stacks"):
    work = testlib.scratch("tt_" + mode)
    shutil.rmtree(work)
    os.makedirs(work)
    stream = os.path.join(work, "app.ljm")
    p = subprocess.run(["tarantool", app, work, stream, mode], capture_output=True, text=True,
                       timeout=120, env=env, cwd=work)
    res.check(p.returncode == 0, "%s: tarantool exit %d: %s" % (mode, p.returncode, p.stderr[-2000:]))
    res.check(("build\t%s (" % label) in p.stdout, "%s: the build picked: %r" % (mode, p.stdout))
    if not os.path.exists(stream):
        continue
    data = open(stream, "rb").read()
    if mode == "stacks":  # the extended stream, read as its standard events
        data = ljmread.downgrade(data)
    r, info = ljmread.decode(data)
    res.check(info["complete"], "%s: complete stream" % mode)
    a13 = testlib.count(r, "ALLOCATIONS", "@%s:13" % app)
    a14 = testlib.count(r, "ALLOCATIONS", "@%s:14" % app)
    box = sum(sum(c) for (sec, name), c in r.items()
              if sec == "ALLOCATIONS" and name.startswith("lbox_replace"))
    res.check(5000 <= a13 <= 5010, "%s: 5000 tables at line 13 (%d)" % (mode, a13))
    res.check(a14 >= 10000, "%s: two strings per row at line 14 (%d)" % (mode, a14))
    res.check(box >= 5000, "%s: box's own allocations in lbox_replace (%d)" % (mode, box))
    if mode == "stacks":
        folded = os.path.join(work, "app.folded")
        c = subprocess.run([ljm, "convert", "-o", folded, stream], capture_output=True, text=True)
        lines = open(folded).read().splitlines() if c.returncode == 0 else []
        under = [l for l in lines  # frames name files without their directories
                 if l.startswith("main chunk (%s);lbox_replace" % os.path.basename(app))]
        res.check(under, "stacks: box.replace under the main chunk: %r" % lines[:5])
res.finish()
