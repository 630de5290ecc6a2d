#!/usr/bin/env python3
"""readme_test.py -- the README reads as a user's page, and the docs say
what the tool does:
* README.md: at most 300 lines; the quick start's two commands for Debian
  12 or 13; installing; a table of every command `ljm --help` lists; one
  recipe per task, each of three to ten command lines with a link to its
  page in doc/; known limitations; a link to every doc/ page;
* no dated figures, sittings or history in README.md and doc/*.md (figures
  live in bench/RESULTS.md, each with its date, commit and command);
* every long option of every command's --help is documented in doc/ (as
  man_test checks the man page), so the man page and the docs agree.

usage: readme_test.py LJM README.md PAGE.md..."""
import os
import re
import subprocess
import sys

ljm, readme = sys.argv[1], sys.argv[2]
pages = sys.argv[3:]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: " + what)


text = open(readme, encoding="utf-8").read()
lines = text.splitlines()
check(len(lines) <= 300, "README.md has %d lines (at most 300: topics go to doc/)" % len(lines))
check(lines[0].startswith("# "), "README.md starts with its title")


def section(title):
    m = re.search(r"^## %s.*?$(.*?)(?=^## |\Z)" % re.escape(title), text, re.M | re.S)
    check(m is not None, "README.md has no section '%s'" % title)
    return m.group(1) if m else ""


quick = section("Quick start")
check("Debian 12 or 13" in text.split("\n## Quick start")[1].split("\n")[0],
      "the quick start's heading says Debian 12 or 13")
cmds = re.findall(r"^(bash scripts/\S+)", quick, re.M)
check(cmds == ["bash scripts/demo.sh", "bash scripts/test.sh"],
      "the quick start is the two commands demo.sh and test.sh: %r" % cmds)
check("scripts/install.sh" in section("Installing"), "Installing names scripts/install.sh")
check("package.cpath" in text, "README.md gives the literal package.cpath line")

table = section("The commands")
top = subprocess.run([ljm, "--help"], capture_output=True, text=True).stdout
commands = re.findall(r"^  ([a-z]+)  ", top.split("commands:")[-1], re.M)
check(len(commands) >= 4, "ljm --help lists its commands: %r" % commands)
for c in commands:
    check("`ljm %s" % c in table, "the commands table has no row for ljm %s" % c)

recipes = re.split(r"^### ", section("Recipes"), flags=re.M)[1:]
check(len(recipes) >= 6, "%d recipes (one per task a user comes with)" % len(recipes))
for r in recipes:
    title = r.split("\n")[0]
    body_lines = []
    for lang, body in re.findall(r"```(\w*)\n(.*?)```", r, re.S):
        body_lines += [ln for ln in body.splitlines() if ln.strip() and lang in ("sh", "console")]
    check(3 <= len(body_lines) <= 10, "recipe '%s': %d command lines (three to ten)"
          % (title, len(body_lines)))
    check(re.search(r"\]\(doc/[\w-]+\.md", r), "recipe '%s' links its page in doc/" % title)
for want in ("Which lines allocate", "stacks", "alive", "nginx", "production", "Compare"):
    check(any(want.lower() in r.split("\n")[0].lower() for r in recipes), "no recipe for '%s'" % want)
check(re.search(r"^- ", section("Known limitations"), re.M), "Known limitations is a list")
for p in pages:
    name = os.path.basename(p)
    check("doc/" + name in text, "README.md does not link doc/%s" % name)

# Figures and history belong in bench/RESULTS.md.
DATED = re.compile(r"\b20\d\d-\d\d-\d\d\b|\bsittings?\b|before this change|adversarial review|"
                   r"\bissue \d+", re.I)
for p in [readme] + pages:
    for no, ln in enumerate(open(p, encoding="utf-8").read().splitlines(), 1):
        m = DATED.search(ln)
        check(not m, "%s:%d: a date or history (%r): figures go to bench/RESULTS.md"
              % (os.path.basename(p), no, m.group(0) if m else ""))

# Every option each command documents in --help is in the docs.
docs = "\n".join(open(p, encoding="utf-8").read() for p in pages)
for c in commands:
    h = subprocess.run([ljm, c, "--help"], capture_output=True, text=True).stdout
    for opt in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", h)) - {"--help"}):
        check(re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(opt), docs),
              "ljm %s %s is in --help but in no doc/ page" % (c, opt))
print("%d failed" % len(failures))
sys.exit(1 if failures else 0)
