#!/usr/bin/env python3
"""corpus_test.py -- record the reference corpus scripts with `ljm record`
and compare with the reference reports (compare_ref.py rules).
usage: corpus_test.py LJM_RECORD CMOD_SO CORPUS_FILE..."""
import os
import shutil
import subprocess
import sys

import compare_ref
import corpus_rules
import testlib

res = testlib.Results("corpus")
tool = testlib.runfile(sys.argv[1])
cmod = testlib.runfile(sys.argv[2])
corpus = os.path.dirname(testlib.runfile([a for a in sys.argv[3:] if a.endswith("test.lua")][0]))
work = testlib.scratch("corpus")
shutil.rmtree(work)
shutil.copytree(corpus, work)
os.makedirs(os.path.join(work, "cmod"), exist_ok=True)
shutil.copy(cmod, os.path.join(work, "cmod", "memprof_cmod.so"))

SKIP, OUTPUT, SCRIPTS = corpus_rules.SKIP, corpus_rules.OUTPUT, corpus_rules.SCRIPTS

# The recorder picks the flavour of the VM under test.
p = subprocess.run([tool, "-"], input='print(require("ljm.recorder").build())', cwd=work,
                   capture_output=True, text=True, timeout=60, env=testlib.vm_env())
res.check(testlib.build_is_vm_flavour(p.stdout),
          "build picked: %r (VM %s)" % (p.stdout + p.stderr, testlib.VM or "system"))

for s in SCRIPTS:
    p = subprocess.run([tool, "-o", s + ".whole.ljm", s + ".lua"], cwd=work,
                       capture_output=True, text=True, timeout=600, env=testlib.vm_env())
    if not res.check(p.returncode == 0, "%s: exit %d: %s" % (s, p.returncode, p.stderr)):
        continue
    stream = os.path.join(work, OUTPUT.get(s, s + ".ljm"))
    argv = ["compare_ref", stream, os.path.join(work, s + ".txt")]
    if s in OUTPUT:
        argv.append("--seed")
    for n in SKIP.get(s, []):
        argv += ["--skip-name", n]
    res.check(compare_ref.main(argv) == 0, "%s: matches the reference report" % s)
    r, info = testlib.rows(os.path.join(work, s + ".whole.ljm"))
    res.check(info["complete"], "%s: whole-run stream complete" % s)

# Specific rules, on top of the row comparison.
A = "ALLOCATIONS"
r, _ = testlib.rows(os.path.join(work, "memprof_new.bin"))
res.check(testlib.count(r, A, "@test.lua:14") >= 10000,
          "tail-called string.rep charged to the caller's caller (test.lua:14)")
res.check(testlib.count(r, A, prefix="@test.lua:6") == 0, "nothing charged to append() itself")
r, _ = testlib.rows(os.path.join(work, "cframes.ljm"))
res.check(testlib.count(r, A, prefix="cmod_make_table:") == 4, "C module function named, 4 allocations")
res.check(testlib.count(r, A, prefix="cmod_make_string:") == 1, "cmod_make_string named")
res.check(testlib.count(r, A, prefix="luaopen_memprof_cmod:") >= 1, "luaopen_memprof_cmod named")
# Functions of the stripped libluajit are named by their Lua names.
res.check(testlib.count(r, A, prefix="package.loaders[2]:") >= 30,
          "Lua loader (lj_cf_package_loader_lua) named package.loaders[2]")
res.check(testlib.count(r, A, prefix="require:") >= 1, "require named")
r, _ = testlib.rows(os.path.join(work, "coroutines.ljm"))
for line, n in ((9, 200), (24, 49), (32, 200), (34, 200)):
    res.check(testlib.count(r, A, "@coroutines.lua:%d" % line) == n,
              "coroutine body coroutines.lua:%d: %d allocations" % (line, n))
r, _ = testlib.rows(os.path.join(work, "xpcall_handler.ljm"))
res.check(testlib.count(r, A, "@xpcall_handler.lua:12") >= 248,  # reference: 253
          "xpcall message handler's traceback charged to the handler's line (main thread and coroutine)")
res.check(testlib.count(r, A, "INTERNAL") <= 2, "nothing of the message handler charged to INTERNAL")
r, _ = testlib.rows(os.path.join(work, "jit_on.ljm"))
res.check(testlib.count(r, A, "TRACE [1] started at @jit_on.lua:14") > 3000,
          "JIT left on: trace allocations as TRACE [n] started at ...")
# A coroutine's stack grown by its resumer (coroutine.resume, a wrap function)
# is INTERNAL, as every Lua stack reallocation in the reference: the same
# REALLOCATIONS rows, none at the resuming lines.
r, _ = testlib.rows(os.path.join(work, "costack.ljm"))
ref = compare_ref.ljmread.parse_report(open(os.path.join(work, "costack.txt")).read())
R = "REALLOCATIONS"
mine = {n for (sec, n) in r if sec == R}
theirs = {n for (sec, n) in ref if sec == R}
res.check(mine == theirs, "costack: REALLOCATIONS rows %s, the reference %s"
          % (sorted(mine), sorted(theirs)))
want = sum(ref[(R, "INTERNAL")])
got = testlib.count(r, R, "INTERNAL")
res.check(abs(got - want) <= 0.1 * want, "costack: %d INTERNAL stack reallocations, the "
          "reference %d (stack sizes differ a little between VMs)" % (got, want))
res.check(testlib.count(r, R, "@costack.lua:10") == sum(ref[(R, "@costack.lua:10")]),
          "costack: the args table's own growth at line 10")
res.finish()
