#!/usr/bin/env python3
"""types_test.py -- allocation types (vm/alloc_type.h) against
testdata/recorder/types/types.lua, whose makers allocate known kinds of

Recorded with stacks, exact and sampled (4k), the JIT on and off. The
stream is read by the tests' own reader (ljmread.parse: the 0x29 items'
rules, each allocation's type). Each allocation is charged to the maker
its innermost Lua frame (or its trace's start) is in, and is right when
its type is one that maker makes by construction, or one any maker makes
(its own closure and upvalues when it is defined, the traces the JIT
compiles of it). Checked:
* at least 99% of the bytes allocated in makers get a right type, in each
  of the four recordings (the figures are printed);
* exact, JIT off: each maker's allocations of its kinds number N, as
  constructed (N tables, N arrays first made, N coroutines, ...);
* exact, JIT on: `ljm report --by type` gives each type the figures of
  ljmread.type_totals, the reader's own replay;
* a standard stream (no --stacks, --time or --sample) has no types, and
  its downgraded typed stream neither;
* the module polled between allocations (is_running writes a time mark
  when one is due, as the nginx example's poll does): each type still
  right after its event, every table typed.
usage: types_test.py LJM_RECORD LJM TYPES_LUA RECORDER_SO"""
import os
import re
import shutil
import subprocess
import sys

import testlib

import ljmread  # tests/lib/ljmread.py, the shared stream reader

res = testlib.Results("types")
record = testlib.runfile(sys.argv[1])
ljm = testlib.runfile(sys.argv[2])
work = testlib.scratch("types")
prog = os.path.join(work, "types.lua")
shutil.copy(testlib.runfile(sys.argv[3]), prog)
so = testlib.runfile(sys.argv[4])
N = 300


def run(cmd):
    return testlib.run_vm(cmd, cwd=work, timeout=300)


# Each maker's lines: from "local function NAME(hold)" to the "end" that
# closes it at the start of a line.
makers = []
with open(prog) as f:
    cur = None
    for i, line in enumerate(f.read().split("\n"), 1):
        m = re.match(r"local function (\w+)\(hold\)", line)
        if m:
            cur = [m.group(1), i]
        elif line == "end" and cur:
            makers.append((cur[0], cur[1], i))
            cur = None


def maker_at(line):
    for name, first, last in makers:
        if first <= line <= last:
            return name
    return None


# What each maker makes by construction (types.lua's header); protos: the
# parser's work (a table of constants with its hash part, its buffers),
# hashes and strings: g->tmpbuf, where concatenation builds.
MAKES = {
    "tables": {"table"}, "colocated": {"table"}, "arrays": {"table", "table.array"},
    "hashes": {"table", "table.hash", "string", "buffer"}, "strings": {"string", "buffer"},
    "closures": {"function", "upvalue"}, "threads": {"thread", "thread.stack"},
    "userdata": {"userdata"}, "cdata": {"cdata"}, "buffers": {"userdata", "buffer"},
    "protos": {"prototype", "function", "string", "table", "table.hash", "internal"},
}
ANY = {"function", "upvalue", "trace"}
# exact, JIT off: allocations (not reallocations) of each kind per maker
COUNTS = {
    "tables": {"table": N}, "colocated": {"table": N},
    "arrays": {"table": N, "table.array": N}, "hashes": {"table": N},
    "strings": {"string": N}, "closures": {"upvalue": N},
    "threads": {"thread": N, "thread.stack": N}, "userdata": {"userdata": N},
    "cdata": {"cdata": N}, "buffers": {"userdata": N, "buffer": N},
    "protos": {"prototype": N},
}


def by_maker(st):
    """{maker: {(type name, event kind): [events, bytes]}} of st's
    allocations and reallocations."""
    line_of = {}

    def line(node):
        if node in line_of:
            return line_of[node]
        n, found = node, None
        while n:
            parent, label = st.nodes[n]
            if label.startswith("TRACE "):
                label = st.trace_starts.get(int(label[6:]), "")
            m = re.match(r".*types\.lua:(\d+)$", label)
            if m:
                found = int(m.group(1))
                break
            n = parent
        line_of[node] = found
        return found

    live, out = {}, {}
    for e in st.events:
        old = live.pop(e.oaddr, None) if e.ev != ljmread.ALLOC else None
        if e.ev == ljmread.FREE:
            continue
        t = e.type or old or 1
        live[e.addr] = t
        where = maker_at(line(e.stack) or 0)
        if where:
            c = out.setdefault(where, {}).setdefault((ljmread.TYPE_NAMES[t], e.ev), [0, 0])
            c[0] += 1
            c[1] += e.size
    return out


def recorded(name, opts):
    path = os.path.join(work, name)
    p = run([record, "--stacks", "-o", path] + opts + [prog, str(N)])
    ok = res.check(p.returncode == 0 and p.stdout.split()[:2] == ["tables", "colocated"],
                   "%s: recorded (%r)" % (name, p.stderr[-300:]))
    with open(path, "rb") as f:
        data = f.read()
    st = ljmread.parse(data)
    res.check(ok and st.complete and not st.problems and st.flags & ljmread.TYPES,
              "%s: a whole stream with allocation types, every rule kept (%s)"
              % (name, st.problems[:3]))
    return path, st, set(p.stdout.split())  # the makers it ran (cdata, buffers: if it can)


for name, opts in (("exact-jit.ljm", []), ("exact-nojit.ljm", ["-j", "off"]),
                   ("sampled-jit.ljm", ["--sample", "4k", "--sample-seed", "5"]),
                   ("sampled-nojit.ljm", ["--sample", "4k", "--sample-seed", "5", "-j", "off"])):
    path, st, ran = recorded(name, opts)
    got = by_maker(st)
    right = wrong = 0
    misses = []
    for maker, rows in got.items():
        for (t, ev), (n, b) in rows.items():
            if t in MAKES[maker] or t in ANY:
                right += b
            else:
                wrong += b
                misses.append("%s %s %s x%d %dB" % (maker, t, ev, n, b))
    share = 100.0 * right / max(1, right + wrong)
    print("%s: %.3f%% of %d bytes allocated in makers of a right type; the others: %s"
          % (name, share, right + wrong, "; ".join(misses) or "none"))
    res.check(set(got) >= ran >= set(MAKES) - {"cdata", "buffers"} and right > 10 * N * 64,
              "%s: every maker's allocations found (%s; ran %s)" % (name, sorted(got), sorted(ran)))
    res.check(share >= 99.0, "%s: %.3f%% of the bytes of a right type (99%% wanted)" % (name, share))
    if name == "exact-nojit.ljm":
        for maker, want in COUNTS.items():
            if maker not in ran:
                continue  # cdata, buffers: not in this LuaJIT
            have = {t: got[maker].get((t, ljmread.ALLOC), [0])[0] for t in want}
            res.check(have == want, "%s: %s makes %s (by construction: %s)"
                      % (name, maker, have, want))
    if name == "exact-jit.ljm":
        want = ljmread.type_totals(st)
        p = run([ljm, "report", "--by", "type", path])
        rows = {}
        for line in p.stdout.split("\n\n")[0].splitlines()[2:]:
            f = line.split()
            rows[f[-1]] = [int(f[2].rstrip("B")), int(f[3]), int(f[0].rstrip("B")), int(f[1])]
        rows.pop("(none)", None)  # frees of blocks made before the recording
        res.check(p.returncode == 0 and rows == want and len(rows) >= 10,
                  "%s: report --by type gives each type the reader's figures (%s; %s)"
                  % (name, rows, want))
        down = os.path.join(work, "down.ljm")
        p = run([ljm, "convert", "-f", "ljm", "-o", down, path])
        with open(down, "rb") as f:
            dst = ljmread.parse(f.read())
        res.check(p.returncode == 0 and dst.flags == 0 and not dst.problems and
                  all(e.type is None for e in dst.events),
                  "the downgraded stream has no types (%r %s)" % (p.stderr, dst.problems[:2]))

plain = os.path.join(work, "plain.ljm")
p = run([record, "-o", plain, prog, str(N)])
with open(plain, "rb") as f:
    pst = ljmread.parse(f.read())
res.check(p.returncode == 0 and pst.flags == 0 and not pst.problems,
          "a standard recording: no extension, no types (%r)" % p.stderr[-200:])
p = run([ljm, "report", "--by", "type", plain])
res.check(p.returncode != 0 and p.stderr.count("\n") == 1,
          "report --by type of a standard stream: refused in one line (%r)" % p.stderr)

# A host that polls between allocations: a time mark is due at each poll.
POLL = """local rec = require("ljm.recorder")
assert(rec.start(arg[1], {time = true}))
local keep = {}
for i = 1, 100 do
  keep[i] = {i}
  local t0 = os.clock()
  while os.clock() - t0 < 0.006 do end
  assert(rec.is_running())
end
assert(rec.stop())
"""
with open(os.path.join(work, "poll.lua"), "w") as f:
    f.write(POLL)
polled = os.path.join(work, "polled.ljm")
p = subprocess.run([testlib.LUAJIT, "-joff", "poll.lua", polled], capture_output=True, text=True,
                   cwd=work, timeout=120, env=testlib.module_cpath(so, "types_poll_cpath"))
with open(polled, "rb") as f:
    pst = ljmread.parse(f.read())
tt = ljmread.type_totals(pst)
res.check(p.returncode == 0 and not pst.problems and len(pst.marks) >= 50 and
          tt.get("table", [0, 0])[1] >= 100,
          "polled between allocations: %d marks, every item right after its event (%s), "
          "the tables typed (%s; %r)" % (len(pst.marks), pst.problems[:2], tt.get("table"),
                                         p.stderr[-300:]))
res.finish()
