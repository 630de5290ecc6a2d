#!/usr/bin/env python3
"""man_test.py -- the manual page against the tool it documents: rendered
as a user reads it (man -l), groff finds nothing to warn about, every
command and every long option each command's --help lists appear in it,
its FORMATS section names each format of `ljm convert --help` with exactly
its suffixes, and THE LUA MODULE describes every function the module has.

usage: man_test.py LJM MAN_PAGE RECORDER_SO"""
import os
import re
import subprocess
import sys

from checks import Checks

# testlib (tests/lib): the environment for stock luajit loading the
# module (with --config=asan, the sanitizer runtime preloaded).
import testlib

ljm, man, so = sys.argv[1:4]
check = Checks("man")

# Rendered by groff as man(1) would, with every warning on.
p = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", man], capture_output=True, text=True)
check(p.returncode == 0 and p.stderr == "", "groff warns about the man page: %r" % p.stderr)
env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8")
p = subprocess.run(["man", "-l", "-P", "cat", man], capture_output=True, text=True, env=env)
check(p.returncode == 0 and "NAME" in p.stdout and "SYNOPSIS" in p.stdout,
      "man -l renders the page: exit %d %r" % (p.returncode, p.stderr))
# Overstrike and hyphenation aside, the text a reader sees.
page = re.sub(r".\x08", "", p.stdout)
page = re.sub(r"\u2010|\u2212", "-", page)
page = re.sub(r"-\n\s*", "-", page)  # a word broken after its hyphen
words = set(re.findall(r"--?[a-z][a-z-]*|[.a-z][a-z0-9.]*", page))


def helptext(*args):
    r = subprocess.run([ljm] + list(args) + ["--help"], capture_output=True, text=True)
    check(r.returncode == 0, "ljm %s --help: exit %d" % (" ".join(args), r.returncode))
    return r.stdout


top = helptext()
commands = re.findall(r"^  ([a-z]+)  ", top.split("commands:")[-1], re.M)
check(sorted(commands) == ["convert", "growth", "heap", "record", "report", "top"],
      "commands: %r" % commands)
for opt in ("--help", "--version"):
    check(opt in top and opt in words, "ljm %s: in --help and in the man page" % opt)
for cmd in commands:
    check("ljm " + cmd in page.replace("\n", " "), "the man page has no 'ljm %s'" % cmd)
    for opt in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", helptext(cmd)))):
        if opt == "--help":
            continue
        check(opt in words, "ljm %s %s is not in the man page" % (cmd, opt))

# FORMATS: a "name (suffixes)" line per format of `ljm convert --help`.
listed = dict(re.findall(r"^ +([a-z]+) \((\.[^)]*)\)$", page.split("FORMATS")[-1], re.M))
rows = testlib.formats_table(helptext("convert"))
for _, name, sfx in rows:
    check(listed.get(name) == ", ".join(sfx),
          "FORMATS: %s (%s) is listed as %r" % (name, ", ".join(sfx), listed.get(name)))
check(len(listed) == len(rows), "FORMATS lists %d formats, convert --help %d" % (len(listed), len(rows)))
# The Lua module's functions, as the module lists them.
p = subprocess.run(["luajit", "-e", 'for k in pairs(require "ljm.recorder") do print(k) end'],
                   capture_output=True, text=True, env=testlib.module_cpath(so, "man_test"))
funcs = sorted(p.stdout.split())
check(p.returncode == 0 and len(funcs) >= 5, "the module's functions: %r %r" % (funcs, p.stderr))
module = page.split("THE LUA MODULE")[-1].split("EXIT STATUS")[0]
for f in funcs:
    check(re.search(r"(?<![\w.])%s\(" % f, module), "THE LUA MODULE does not describe %s()" % f)
sys.exit(check.done(minimum=40))
