#!/usr/bin/env python3
"""check_test.py -- require "ljm.check" on the VM under test (testlib.VM):
no_leak catches a 64-byte-a-call leak and names its line and caller, and
leaks every 2nd and every 5th call; passes one under a limit, and eleven
clean workloads (JIT on and off, a few runs each; bench/check runs them
100 times); limit_memory fails at half a function's peak and passes at
twice it; usage errors; an error inside the
function comes back with its traceback, no recording left running and the
collector as it was; beside the user's own recording, no_leak measures
without stacks, limit_memory refuses in one line, the user's stream stays
whole.
busted (Debian's lua-busted, run by the VM under test): a spec with
require "ljm.busted" in which one test leaks fails that test alone, with
ljm.check's report as its message.
usage: check_test.py RECORDER_SO CHECK_CORE_SO CHECK_LUA BUSTED_LUA CASES_LUA LEAK_SPEC_LUA"""
import glob
import os
import re
import shutil
import subprocess
import sys

import ljmread
import testlib

res = testlib.Results("check")
so, core, lua, busted_lua, cases, spec = (testlib.runfile(p) for p in sys.argv[1:7])
env = testlib.module_cpath(so, "check_cpath")
cdir = env["LUA_CPATH"].split("?")[0]
shutil.copy(core, os.path.join(cdir, "ljm", "check_core.so"))
ldir = testlib.scratch("check_path")
os.makedirs(os.path.join(ldir, "ljm"), exist_ok=True)
shutil.copy(lua, os.path.join(ldir, "ljm", "check.lua"))
shutil.copy(busted_lua, os.path.join(ldir, "ljm", "busted.lua"))
env["LUA_PATH"] = os.path.join(ldir, "?.lua") + ";;"
work = testlib.scratch("check_work")


def run(case, *args, timeout=600):
    p = subprocess.run([testlib.LUAJIT, cases, case] + list(args), capture_output=True,
                       text=True, env=env, timeout=timeout, cwd=os.path.dirname(cases))
    out = p.stdout + p.stderr
    res.check("no files left behind" in out and "temporary names" in out,
              "%s: ljm.check leaves no file behind: %s" % (case, out[-300:]))
    return p.returncode, out


src = open(cases).read().split("\n")
leak_line = next(i + 1 for i, l in enumerate(src) if "kept[#kept + 1] = { v }" in l)
rc, out = run("leak")
res.check(rc == 0 and "leak: ok" in out, "no_leak catches the leak: %s" % out[-1500:])
m = re.search(r"leak: ([\d.]+) bytes, ([\d.]+) blocks an iteration", out)
res.check(m is not None and 32 <= float(m.group(1)) <= 256 and 0.9 <= float(m.group(2)) <= 2.5,
          "about one small block an iteration: %r" % ((m and m.groups()),))
first = [l for l in out.split("\n") if re.match(r"\s+[\d.]+ (B|KiB|MiB) in", l)]
res.check(first and ("check_cases.lua:%d" % leak_line) in first[0],
          "the first line held is the leaking line check_cases.lua:%d: %r" % (leak_line, first[:2]))
res.check(re.search(r"stack 1: .*\n(\s+.*\n)*?\s+remember \(check_cases\.lua\)\n\s+handle_request "
                    r"\(check_cases\.lua\)", out) is not None,
          "the first stack names the function and its caller: %s" % out[-1200:])

rc, out = run("leak_patterns")
res.check(rc == 0 and "leak_patterns: ok" in out, "leaks every 2nd and every 5th call: %s" % out[-800:])

rc, out = run("leak_limit")
res.check(rc == 0 and "leak_limit: ok" in out, "a limit of 1k an iteration lets it pass: %s" % out[-800:])

rc, out = run("clean", "3")
res.check(rc == 0 and "clean: ok" in out, "no false positives: %s" % out[-3000:])
ran = re.findall(r"clean jit (on|off) (\w+): (\d+) of (\d+) runs passed", out)
res.check(len(ran) == 22 and all(int(a) == int(b) for _, _, a, b in ran),
          "eleven workloads, JIT on and off: %r" % ran)

rc, out = run("limit")
res.check(rc == 0 and "limit: ok" in out, "limit_memory at 0.5x and 2x of the peak: %s" % out[-1500:])
res.check("peak256k" in out, "limit_memory's report names the function: %s" % out[-1500:])

rc, out = run("errors")
res.check(rc == 0 and "errors: ok" in out, "usage errors, errors inside fn, state kept: %s" % out[-1500:])

user = os.path.join(work, "user.ljm")
rc, out = run("busy", "3", user)
res.check(rc == 0 and "busy: ok" in out, "beside the user's recording: %s" % out[-1500:])
st = ljmread.parse(open(user, "rb").read()) if os.path.exists(user) else None
res.check(st is not None and st.complete and not st.problems and len(st.events) > 0,
          "the user's stream is whole: %r" % ((st and (st.complete, st.problems[:2])),))

# busted, as Debian installs it, under the VM under test.
benv = dict(env)
benv["LUA_PATH"] = ";".join([os.path.join(ldir, "?.lua"), "/usr/share/lua/5.1/?.lua",
                             "/usr/share/lua/5.1/?/init.lua", ""])
benv["LUA_CPATH"] = ";".join([os.path.join(cdir, "?.so")] +
                             [d + "/?.so" for d in glob.glob("/usr/lib/*/lua/5.1")] + [""])
res.check(os.path.exists("/usr/bin/busted"), "busted is installed (lua-busted; scripts/setup-tests.d)")
p = subprocess.run([testlib.LUAJIT, "/usr/bin/busted", "-o", "TAP", os.path.basename(spec)],
                   capture_output=True, text=True, env=benv, timeout=600, cwd=os.path.dirname(spec))
out = p.stdout + p.stderr
oks = re.findall(r"^ok (\d+) ", out, re.M)
nots = re.findall(r"^not ok (\d+) ", out, re.M)
res.check(p.returncode != 0 and oks == ["1", "3", "4"] and nots == ["2"],
          "busted: test 2 fails, 1, 3 and 4 pass (exit %d): %s" % (p.returncode, out[-2500:]))
keep_line = next(i + 1 for i, l in enumerate(open(spec).read().split("\n"))
                 if "kept[#kept + 1] = { v }" in l)
res.check("ljm.check.no_leak: the heap grows by" in out and ("leak_spec.lua:%d" % keep_line) in out
          and "keep (leak_spec.lua)" in out,
          "busted's message is the report naming leak_spec.lua:%d and keep(): %s"
          % (keep_line, out[-2500:]))
res.finish()
