#!/usr/bin/env python3
"""install_test.py -- scripts/install-files.sh (the copying half of
scripts/install.sh) under a scratch prefix: the five files with their
modes, the installed ljm and Lua modules working from there (a zstd
recording through the module read back by the installed ljm; ljm.check
found on LuaJIT's paths under the prefix and passing a clean function), a second
install over the first, and --uninstall removing exactly what was
installed (a file and a directory that were there before stay).

usage: install_test.py INSTALL_FILES LJM RECORDER_SO CHECK_CORE_SO CHECK_LUA MAN_PAGE"""
import os
import stat
import subprocess
import sys
import tempfile

from checks import Checks

# testlib (tests/lib): the environment for stock luajit loading the
# module (with --config=asan, the sanitizer runtime preloaded).
import testlib

script, ljm, so, core, check_lua, man = sys.argv[1:7]
check = Checks("install")
prefix = os.path.join(os.environ.get("TEST_TMPDIR") or tempfile.mkdtemp(), "prefix")
os.makedirs(os.path.join(prefix, "bin"))
open(os.path.join(prefix, "bin", "other"), "w").write("not ours\n")
before = sorted(os.path.relpath(os.path.join(d, f), prefix)
                for d, ds, fs in os.walk(prefix) for f in fs + ds)


def sh(*args, **kw):
    return subprocess.run(["bash", script] + list(args), capture_output=True, text=True, **kw)


def tree():
    return sorted(os.path.relpath(os.path.join(d, f), prefix)
                  for d, ds, fs in os.walk(prefix) for f in fs + ds)


p = sh(prefix, ljm, so, core, check_lua, man)
check(p.returncode == 0, "install: exit %d %r" % (p.returncode, p.stderr))
want = {"bin/ljm": 0o755, "lib/lua/5.1/ljm/recorder.so": 0o644,
        "lib/lua/5.1/ljm/check_core.so": 0o644, "share/lua/5.1/ljm/check.lua": 0o644,
        "share/man/man1/ljm.1": 0o644}
for rel, mode in want.items():
    path = os.path.join(prefix, rel)
    ok = os.path.isfile(path) and stat.S_IMODE(os.stat(path).st_mode) == mode
    check(ok, "%s installed with mode %o" % (rel, mode))
check(open(os.path.join(prefix, "share/man/man1/ljm.1")).read().startswith(".\\\"") and
      ".TH LJM 1" in open(os.path.join(prefix, "share/man/man1/ljm.1")).read(), "man page")

# The installed tool and module, used as a user would.
bin_ljm = os.path.join(prefix, "bin", "ljm")
p = subprocess.run([bin_ljm, "--version"], capture_output=True, text=True)
check(p.returncode == 0 and p.stdout.startswith("ljm "), "installed ljm --version: %r" % p.stdout)
rec = os.path.join(prefix, "..", "mod.ljm.zst")
lua = ('local rec = require "ljm.recorder"; assert(rec.start(%r)); local t = {} '
       'for i = 1, 5000 do t[i] = {i} end; assert(rec.stop())' % rec)
env = dict(testlib.module_env(so), LUA_CPATH=os.path.join(prefix, "lib/lua/5.1/?.so") + ";;")
p = subprocess.run(["luajit", "-e", lua], capture_output=True, text=True, env=env)
check(p.returncode == 0, "luajit finds the installed module: %r" % p.stderr)
# -q: no progress line, nor the note that JIT traces hold the loop's allocations.
p = subprocess.run([bin_ljm, "report", "-q", rec], capture_output=True, text=True)
check(p.returncode == 0 and "ALLOCATIONS" in p.stdout and p.stderr == "",
      "installed ljm reads the module's .zst recording: %r" % p.stderr)

lua = ('local check = require "ljm.check"; local ok, r = check.no_leak(function() '
       'local t = {} for i = 1, 100 do t[i] = i end end); assert(ok, r); print("check: ok")')
env["LUA_PATH"] = os.path.join(prefix, "share/lua/5.1/?.lua") + ";;"
p = subprocess.run(["luajit", "-e", lua], capture_output=True, text=True, env=env)
check(p.returncode == 0 and "check: ok" in p.stdout,
      "luajit finds the installed ljm.check: %r" % (p.stdout + p.stderr)[-500:])

# Again over the first install, then uninstall.
p = sh(prefix, ljm, so, core, check_lua, man)
check(p.returncode == 0, "second install: exit %d" % p.returncode)
p = sh("--uninstall", prefix)
check(p.returncode == 0, "uninstall: exit %d %r" % (p.returncode, p.stderr))
check(tree() == before, "uninstall leaves what was there before, only: %r" % tree())
p = sh("--uninstall", prefix)
check(p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1 and "nothing" in p.stderr,
      "uninstall with nothing installed: exit %d %r" % (p.returncode, p.stderr))
p = sh(prefix, "/nonexistent/ljm", so, core, check_lua, man)
check(p.returncode == 1 and not os.path.exists(os.path.join(prefix, "share")),
      "a missing file installs nothing: exit %d" % p.returncode)
sys.exit(check.done())
