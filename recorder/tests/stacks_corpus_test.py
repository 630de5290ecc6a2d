#!/usr/bin/env python3
"""stacks_corpus_test.py -- every corpus script of corpus_test.py again,
with `ljm record --stacks`, and with the script's own misc.memprof
recording extended too (LUA_INIT passes {stacks = true} to its start):
both streams must follow decoder/EXTENSION.md, and the downgrade of the
script's stream (extension items dropped, flags byte 0) must match the
reference report by the same rules as the standard recording
(compare_ref.py). Per line, the folded stacks of the whole-run stream count
what its downgrade's and `ljm report` count, and so do pprof's leaf
locations (`go tool pprof -traces -lines`). `ljm convert -f ljm` must write that same downgrade byte
for byte, and `ljm report` must print the same on the extended stream as
on its downgrade.
usage: stacks_corpus_test.py LJM_RECORD CMOD_SO LJM CORPUS_FILE..."""
import os
import re
import shutil
import subprocess
import sys

import compare_ref
import corpus_rules
import testlib

import ljmread  # tests/lib/ljmread.py, the shared stream reader

res = testlib.Results("stacks_corpus")
tool = testlib.runfile(sys.argv[1])
cmod = testlib.runfile(sys.argv[2])
ljm = testlib.runfile(sys.argv[3])
corpus = os.path.dirname(testlib.runfile([a for a in sys.argv[4:] if a.endswith("test.lua")][0]))
work = testlib.scratch("stacks_corpus")
shutil.rmtree(work)
shutil.copytree(corpus, work)
os.makedirs(os.path.join(work, "cmod"), exist_ok=True)
shutil.copy(cmod, os.path.join(work, "cmod", "memprof_cmod.so"))

# The script's misc.memprof.start(path) becomes start(path, {stacks = true}).
INIT = ("local start = misc.memprof.start "
        "misc.memprof.start = function(path) return start(path, {stacks = true}) end")


def check_ext(path, what):
    data = open(path, "rb").read()
    st = ljmread.parse(data)
    res.check(st.complete and st.flags == 3 | ljmread.TYPES, "%s: complete, flags %#x" % (what, st.flags))
    res.check(not st.problems, "%s: follows EXTENSION.md: %s" % (what, st.problems[:5]))
    evs = [e for e in st.events if e.name != "INTERNAL"]
    res.check(all(e.stack for e in evs), "%s: every event but INTERNAL has a stack" % what)
    res.check(st.marks and st.marks[0][2] == 0 and st.rss, "%s: time mark and RSS first" % what)
    return data


def check_ljm(ext, down, what):
    """ljm's own downgrade and report agree with this reader's downgrade."""
    mine = ext + ".ljm-down"
    p = subprocess.run([ljm, "convert", "-f", "ljm", "-o", mine, ext], capture_output=True,
                       text=True, timeout=300)
    res.check(p.returncode == 0, "%s: ljm convert -f ljm: %s" % (what, p.stderr))
    res.check(p.returncode == 0 and open(mine, "rb").read() == open(down, "rb").read(),
              "%s: ljm convert -f ljm writes this reader's downgrade byte for byte" % what)
    for opts in ([], ["--leak-only"]):
        a = subprocess.run([ljm, "report"] + opts + [ext], capture_output=True, timeout=300)
        b = subprocess.run([ljm, "report"] + opts + [down], capture_output=True, timeout=300)
        res.check(a.returncode == 0 and a.stdout == b.stdout and a.stdout,
                  "%s: ljm report %s of the extended stream = of its downgrade" % (what, opts))


def leaves(path, what):
    """Folded leaf frame -> allocations (alloc_count: ALLOC and REALLOC)."""
    p = subprocess.run([ljm, "convert", "-f", "folded", "--value", "alloc_count", "-o", "-",
                        path], capture_output=True, text=True, timeout=300)
    res.check(p.returncode == 0, "%s: folded: %s" % (what, p.stderr))
    out = {}
    for line in p.stdout.splitlines():
        stack, _, n = line.rpartition(" ")
        leaf = stack.split(";")[-1]
        out[leaf] = out.get(leaf, 0) + int(n)
    return out


def pprof_lines(path, what):
    """'file:line' -> allocations whose pprof leaf location is that line
    (`go tool pprof -traces -lines`, alloc_objects)."""
    pb = path + ".pb.gz"
    p = subprocess.run([ljm, "convert", "-q", "-o", pb, path], capture_output=True, text=True,
                       timeout=300)
    res.check(p.returncode == 0, "%s: pprof convert: %s" % (what, p.stderr))
    p = subprocess.run(["go", "tool", "pprof", "-sample_index=alloc_objects", "-traces", "-lines",
                        pb], capture_output=True, text=True, timeout=300)
    res.check(p.returncode == 0, "%s: go tool pprof -traces: %s" % (what, p.stderr[-300:]))
    out = {}
    for block in p.stdout.split("-----------+")[1:]:
        # a sample's labels ("      type:  table") come before its rows
        rows = [r for r in block.splitlines()[1:] if r.strip() and not re.match(r"^\s+\S+:  ", r)]
        m = re.match(r"^\s+(\d+)\s+.*\s(\S+:\d+)$", rows[0]) if rows else None
        if m:
            out[m.group(2)] = out.get(m.group(2), 0) + int(m.group(1))
    return out


def report_lines(path):
    """'file:line' -> ALLOCATIONS + REALLOCATIONS events of `ljm report`."""
    p = subprocess.run([ljm, "report", path], capture_output=True, text=True, timeout=300)
    out, sec = {}, None
    for line in p.stdout.splitlines():
        if line in ("ALLOCATIONS", "REALLOCATIONS", "DEALLOCATIONS", "HEAP SUMMARY"):
            sec = line
            continue
        m = re.match(r"^@(.+:\d+): (\d+) events\t", line)
        if m and sec in ("ALLOCATIONS", "REALLOCATIONS"):
            out[m.group(1)] = out.get(m.group(1), 0) + int(m.group(2))
    return out


def check_per_line(ext, down, what):
    """Per line (and per INTERNAL, C function, trace), the stacked view counts
    what the flat one does: an event is charged to its own site, under its
    stack; and the Lua lines' counts are the text report's."""
    a, b = leaves(ext, what), leaves(down, what + " downgrade")
    diff = {k: (a.get(k, 0), b.get(k, 0)) for k in set(a) | set(b) if a.get(k, 0) != b.get(k, 0)}
    res.check(not diff, "%s: stacked folded leaves = the standard stream's: %s"
              % (what, sorted(diff.items())[:5]))
    rep = report_lines(ext)
    skip = corpus_rules.SKIP.get(s, [])
    # Folded frames name a line by its file's last component.
    rep_base = {}
    for k, n in rep.items():
        if k not in skip:
            rep_base[k.rpartition("/")[2]] = rep_base.get(k.rpartition("/")[2], 0) + n
    bad = {k: (n, a.get(k, 0)) for k, n in rep_base.items() if a.get(k, 0) != n}
    res.check((rep or s == "empty") and not bad, "%s: per line, stacked folded = ljm report: %s"
              % (what, sorted(bad.items())[:5]))
    pp = pprof_lines(ext, what)
    bad = {k: (n, pp.get(k, 0)) for k, n in rep.items() if k not in skip and pp.get(k, 0) != n}
    res.check(not bad, "%s: per line, pprof's leaf lines = ljm report: %s"
              % (what, sorted(bad.items())[:5]))


for s in corpus_rules.SCRIPTS:
    env = testlib.vm_env(dict(os.environ, LUA_INIT=INIT))
    p = subprocess.run([tool, "--stacks", "-o", s + ".whole.ljm", s + ".lua"], cwd=work,
                       capture_output=True, text=True, timeout=600, env=env)
    if not res.check(p.returncode == 0, "%s: exit %d: %s" % (s, p.returncode, p.stderr)):
        continue
    whole = os.path.join(work, s + ".whole.ljm")
    with open(whole + ".down", "wb") as f:
        f.write(ljmread.downgrade(check_ext(whole, s + " whole run")))
    check_per_line(whole, whole + ".down", s + " whole run")
    own = os.path.join(work, corpus_rules.OUTPUT.get(s, s + ".ljm"))
    data = check_ext(own, s)
    down = own + ".down"
    with open(down, "wb") as f:
        f.write(ljmread.downgrade(data))
    check_ljm(own, down, s)
    argv = ["compare_ref", down, os.path.join(work, s + ".txt")]
    if s in corpus_rules.OUTPUT:
        argv.append("--seed")
    for n in corpus_rules.SKIP.get(s, []):
        argv += ["--skip-name", n]
    res.check(compare_ref.main(argv) == 0, "%s: downgrade matches the reference report" % s)
res.finish()
