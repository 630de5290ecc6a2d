#!/usr/bin/env python3
"""stacks_views_test.py -- call stacks recorded from the real LuaJIT, as the
viewers show them.

Records testdata/recorder/stacks/chains.lua (JIT off: methods, local
functions, recursion, tail calls, coroutines, pcall, metamethods, varargs)
and jit_chains.lua (JIT on: a loop compiled into a trace) with
`ljm record --stacks`, converts them, and asserts the call chains and
their allocation counts the scripts make (each loop runs N = 200 times and
allocates one table per turn) where users read them:

  * folded stacks (root first, as flamegraph.pl and speedscope take them);
  * `go tool pprof -traces` (leaf first; with -lines, the caller's line);
  * `heaptrack_print -F` (heaptrack's own flame-graph stacks, from the
    trace tree).

bursts.lua (10 bursts of allocations, ~50 ms of idle work after each):
the heaptrack file has time stamps in the idle stretches, so that
heaptrack_gui's charts (a point per 'c' line) stay flat there; recorded
with --stacks and with --time, whose stream every format reads.

usage: stacks_views_test.py LJM CHAINS_LUA JIT_CHAINS_LUA BURSTS_LUA
"""
import collections
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

import testlib
from checks import Checks

check = Checks("stacks_views_test")
LJM = os.path.abspath(sys.argv[1])
SCRIPTS = [os.path.abspath(p) for p in sys.argv[2:5]]
N = 200

MAIN = ["pmain", "main chunk (chains.lua)"]  # ljm record's C entry, the chunk
F = "(chains.lua)"
# Folded stack (root first) -> allocations: exactly N, or (lo, hi) where a
# built-in or the first resume allocates a little more than the loop's tables.
FOLDED = {
    (*MAIN, "Account:deposit " + F, "chains.lua:11"): N,  # defined as Account:deposit
    (*MAIN, "outer " + F, "helper " + F, "chains.lua:16"): N,
    (*MAIN, *["deep " + F] * 6, "chains.lua:25"): N,
    # string.rep's tables are charged to its calling line: that line is the
    # leaf under the built-in, as the text report counts it.
    (*MAIN, "[tail call]", "string.rep", "chains.lua:46"): (N, N + 10),
    (*MAIN, "[tail call]", "lua_leaf " + F, "chains.lua:34"): N,
    (*MAIN, "lua_leaf " + F, "chains.lua:34"): N,  # via a global: unmarked
    (*MAIN, "coroutine.resume", "[coroutine]", "producer " + F, "chains.lua:51"): (N, N + 1),
    (*MAIN, "coroutine.wrap", "[coroutine]", "function <chains.lua:55>",
     "chains.lua:56"): N,
    (*MAIN, "coroutine.resume", "[coroutine]", "function <chains.lua:62>",
     "coroutine.wrap", "[coroutine]", "function <chains.lua:59>", "chains.lua:60"): N,
    (*MAIN, "pcall/xpcall", "in_pcall " + F, "chains.lua:68"): (N, N + 1),
    (*MAIN, "__index " + F, "chains.lua:73"): N,
    (*MAIN, "va " + F, "chains.lua:77"): N,
}


def run(cmd, cwd):
    return testlib.run(cmd, cwd=cwd, timeout=300)


def in_range(got, want):
    lo, hi = want if isinstance(want, tuple) else (want, want)
    return lo <= got <= hi


def record(script, work, opt="--stacks"):
    shutil.copy(script, work)
    name = os.path.basename(script)
    out = name.replace(".lua", opt.replace("--stacks", "").replace("--", "_") + ".ljm")
    p = run([LJM, "record", opt, "-o", out, name], work)
    check(p.returncode == 0, "record %s %s: exit %d %s" % (opt, name, p.returncode, p.stderr))
    return os.path.join(work, out)


def folded(prof, work):
    p = run([LJM, "convert", "-f", "folded", "--value", "alloc_count", "-o", "-", prof], work)
    check(p.returncode == 0, "folded: %s" % p.stderr)
    out = collections.Counter()
    for line in p.stdout.splitlines():
        stack, _, count = line.rpartition(" ")
        out[tuple(stack.split(";"))] += int(count)
    return out


def pprof_traces(prof, work, lines=False):
    """(frames leaf first) -> objects, from go tool pprof -traces."""
    pb = os.path.join(work, os.path.basename(prof) + ".pb.gz")
    p = run([LJM, "convert", "-o", pb, prof], work)
    check(p.returncode == 0, "pprof convert: %s" % p.stderr)
    cmd = ["go", "tool", "pprof", "-sample_index=alloc_objects", "-traces"]
    p = run(cmd + (["-lines"] if lines else []) + [pb], work)
    check(p.returncode == 0, "go tool pprof -traces: %s" % p.stderr)
    out = collections.Counter()
    for block in p.stdout.split("-----------+")[1:]:
        # a sample's labels ("      type:  table") come before its rows
        rows = [r for r in block.splitlines()[1:] if r.strip() and not re.match(r"^\s+\S+:  ", r)]
        if not rows:
            continue
        m = re.match(r"^\s+(\d+)\s+(.*)$", rows[0])
        if not check(m is not None, "pprof -traces: unreadable block %r" % rows[:2]):
            continue
        frames = [m.group(2).strip()] + [r.strip() for r in rows[1:]]
        out[tuple(frames)] += int(m.group(1))
    return out


def heaptrack_stacks(prof, work):
    """(frames root first) -> allocations, from heaptrack_print -F."""
    ht = os.path.join(work, os.path.basename(prof) + ".heaptrack.gz")
    p = run([LJM, "convert", "-o", ht, prof], work)
    check(p.returncode == 0, "heaptrack convert: %s" % p.stderr)
    stacks = ht + ".stacks"
    p = run(["heaptrack_print", "-f", ht, "-F", stacks, "--flamegraph-cost-type", "allocations"],
            work)
    check(p.returncode == 0 and os.path.exists(stacks), "heaptrack_print -F: %s" % p.stderr)
    out = collections.Counter()
    with open(stacks, encoding="utf-8") as fh:
        for line in fh:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            out[tuple(stack.rstrip(";").split(";"))] += int(count)
    return out


# A line charged below a built-in (the folded leaf "chains.lua:46" under
# string.rep) is a frame of the function holding that line in the views that
# name functions, not lines.
LINE_FUNC = {"chains.lua:46": "main chunk " + F}


def by_function(stack):
    """A folded stack as the views that name functions draw it: the leaf line
    dropped after its function, or named by its function below a built-in."""
    if not stack[-1].startswith("chains.lua:"):
        return stack
    if stack[-1] in LINE_FUNC:
        return stack[:-1] + (LINE_FUNC[stack[-1]],)
    return stack[:-1]


def pprof_name(frame):
    """The pprof function of a folded frame: module.function for Lua
    functions, the line frame dropped (pprof keeps lines in locations)."""
    m = re.match(r"^(.*) \((\w+)\.lua\)$", frame)
    if m:
        return "%s.%s" % (m.group(2), m.group(1))
    m = re.match(r"^function <(\w+)\.lua:(\d+)>$", frame)
    if m:
        return "%s.function (%s.lua:%s)" % (m.group(1), m.group(1), m.group(2))
    return frame


def heaptrack_name(frame):
    """heaptrack_print -F writes 'function (module)' for frames with a file."""
    m = re.match(r"^function <(\w+\.lua):(\d+)>$", frame)
    if m:
        return "function (%s:%s) (%s)" % (m.group(1), m.group(2), m.group(1))
    return frame


def check_chains(work):
    prof = record(SCRIPTS[0], work)
    got = folded(prof, work)
    for stack, want in FOLDED.items():
        check(in_range(got.get(stack, 0), want),
              "folded: %s -> %d, want %s" % (";".join(stack), got.get(stack, 0), want))
    check(all(k[0] == "pmain" for k in got), "folded: every stack starts at ljm record's pmain")

    traces = pprof_traces(prof, work)
    for stack, want in FOLDED.items():
        fn = tuple(pprof_name(f) for f in reversed(by_function(stack)))
        check(in_range(traces.get(fn, 0), want),
              "pprof -traces: %s -> %d, want %s" % (" <- ".join(fn), traces.get(fn, 0), want))
    lines = pprof_traces(prof, work, lines=True)
    want = ("chains.Account:deposit chains.lua:11", "chains.main chunk chains.lua:43", "pmain [C]")
    check(lines.get(want, 0) == N, "pprof -traces -lines: the method at its line under its "
          "caller's line: %s -> %d" % (" <- ".join(want), lines.get(want, 0)))
    want = ("chains.deep chains.lua:25",) + ("chains.deep chains.lua:26",) * 5 + \
        ("chains.main chunk chains.lua:45", "pmain [C]")
    check(lines.get(want, 0) == N, "pprof -traces -lines: recursion at its call lines: %d"
          % lines.get(want, 0))

    ht = heaptrack_stacks(prof, work)
    for stack, want in FOLDED.items():
        fr = tuple(heaptrack_name(f) for f in by_function(stack))
        check(in_range(ht.get(fr, 0), want),
              "heaptrack_print -F: %s -> %d, want %s" % (";".join(fr), ht.get(fr, 0), want))


def check_jit(work):
    prof = record(SCRIPTS[1], work)
    base = ("pmain", "main chunk (jit_chains.lua)", "caller (jit_chains.lua)")
    got = folded(prof, work)
    # 40 x 2000 tables {i, i}: nearly all allocated by the loop's trace,
    # which started in work() at line 4: work() stays under the trace, as
    # its frame would with the JIT off, then its callers.
    on_trace = {k: v for k, v in got.items() if k[:4] == base + ("work (jit_chains.lua)",)
                and len(k) == 5 and re.match(r"^TRACE \[\d+\] jit_chains\.lua:4$", k[4])}
    best = max(on_trace.values(), default=0)
    check(best > 50000, "folded: the loop's trace above work() and caller(): %r" % on_trace)
    traces = pprof_traces(prof, work)
    tr = {k: v for k, v in traces.items()
          if k[1:] == ("jit_chains.work", "jit_chains.caller", "jit_chains.main chunk", "pmain")
          and k[0].startswith("TRACE [")}
    check(max(tr.values(), default=0) == best, "pprof -traces: the trace leaf, then work() "
          "and its callers: %r (folded: %d)" % (tr, best))
    ht = heaptrack_stacks(prof, work)
    hs = {k: v for k, v in ht.items() if k[:4] == base + ("work (jit_chains.lua)",) and len(k) == 5
          and k[4].startswith("TRACE")}
    check(max(hs.values(), default=0) == best, "heaptrack_print -F: the trace leaf above "
          "work() and its callers: %r (folded: %d)" % (hs, best))
    check_jit_diff(work, prof)


def check_jit_diff(work, prof_on):
    """JIT on against JIT off (`go tool pprof -diff_base`): the same tables,
    so work() holds the same objects in both and its difference is ~0."""
    env = dict(os.environ, LUA_INIT="jit.off()")
    p = subprocess.run([LJM, "record", "--stacks", "-o", "jit_off.ljm",
                        os.path.basename(SCRIPTS[1])], cwd=work, env=env,
                       capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "record with the JIT off: %s" % p.stderr)
    pbs = []
    for prof in (prof_on, os.path.join(work, "jit_off.ljm")):
        pbs.append(prof + ".pb.gz")
        p = run([LJM, "convert", "-o", pbs[-1], prof], work)
        check(p.returncode == 0, "pprof convert: %s" % p.stderr)
    p = run(["go", "tool", "pprof", "-sample_index=alloc_objects", "-top", "-cum",
             "-diff_base", pbs[1], pbs[0]], work)
    total = re.search(r"of (-?\d+) total", p.stdout)
    row = re.search(r"^\s*(-?\d+)\s+\S+\s+\S+\s+(-?\d+)\s+\S+\s+jit_chains\.work$", p.stdout, re.M)
    check(p.returncode == 0 and total and row and int(total.group(1)) > 50000 and
          abs(int(row.group(2))) * 100 < int(total.group(1)),
          "pprof -diff_base JIT off vs on: work()'s objects nearly equal: %r"
          % (row.group(0) if row else p.stdout[-600:]))


# Frames the stream names (0x25): the bytecode that defines them.
STREAM_NAMED = ["Account:deposit " + F, "outer " + F, "helper " + F, "deep " + F, "va " + F,
                "__index " + F]


def check_stream_names(work):
    """Names of an extended stream do not depend on where it is converted:
    the frames the stream names read the same with the sources at hand and
    without them; without them `ljm convert` says once that sources were not
    found, and -q silences that."""
    prof = os.path.join(work, "chains.ljm")
    away = tempfile.mkdtemp(prefix="away-", dir=work)
    here = folded(prof, work)
    # The profile moved away from its sources: neither the current
    # directory nor the profile's own has them.
    moved = os.path.join(away, "chains.ljm")
    shutil.copy(prof, moved)
    cmd = [LJM, "convert", "-f", "folded", "--value", "alloc_count", "-o", "-", moved]
    p = run(cmd, away)
    there = collections.Counter()
    for line in p.stdout.splitlines():
        stack, _, count = line.rpartition(" ")
        there[tuple(stack.split(";"))] += int(count)
    for name in STREAM_NAMED:
        a = sum(v for k, v in here.items() if name in k)
        b = sum(v for k, v in there.items() if name in k)
        check(a >= N and a == b, "stream name %r: %d allocations under it with the sources, "
              "%d without" % (name, a, b))
    notes = [l for l in p.stderr.splitlines() if "source file" in l]
    check(p.returncode == 0 and len(notes) == 1 and "not found" in notes[0] and
          "chains.lua" in notes[0], "convert without sources: one note on stderr: %r" % p.stderr)
    q = run(cmd[:2] + ["-q"] + cmd[2:], away)
    check(q.returncode == 0 and q.stderr == "", "-q: no note: %r" % q.stderr)
    h = run(cmd, work)
    check(h.returncode == 0 and h.stderr == "", "sources found: no note: %r" % h.stderr)
    # Converted from elsewhere, the profile beside its sources: found there.
    b = run(cmd[:-1] + [prof], away)
    check(b.returncode == 0 and b.stderr == "", "sources beside the profile: no note: %r"
          % b.stderr)


def check_idle(work, opt):
    """Heaptrack's time stamps keep idle stretches flat: after each burst but
    the last, two 'c' lines at least 30 ms apart with no allocation or free
    between them (heaptrack_gui draws a point per 'c' line: a flat line
    between them, not a ramp to the next burst), and the time axis spans
    the run; with --stacks and with --time (time marks, no stacks)."""
    prof = record(SCRIPTS[2], work, opt)
    ht = prof + ".heaptrack.gz"
    p = run([LJM, "convert", "-o", ht, prof], work)
    check(p.returncode == 0, "heaptrack convert: %s" % p.stderr)
    stamps, flat, last_c, events_since = [], [], None, 0
    for line in gzip.open(ht, "rt", encoding="utf-8", errors="replace"):
        if line.startswith("c "):
            ms = int(line.split()[1], 16)
            if last_c is not None and not events_since and ms - last_c >= 30:
                flat.append((last_c, ms))
            stamps.append(ms)
            last_c, events_since = ms, 0
        elif line[:2] in ("+ ", "- "):
            events_since += 1
    check(len(flat) >= 9, "heaptrack %s: flat stretches between bursts (two 'c' lines >= 30 ms "
          "apart, nothing between): %r" % (opt, flat))
    check(stamps and stamps == sorted(stamps) and stamps[-1] >= 450,
          "heaptrack %s: time stamps never go back and span the run (last %s ms)"
          % (opt, stamps[-1] if stamps else None))
    return prof


FORMATS = ("text", "folded", "svg", "markdown", "json", "pprof", "heaptrack", "speedscope",
           "heapprofile")


def check_time_views(prof, work):
    """A --time stream (time marks, no stacks) in every format: each written;
    its report is its downgrade's (the same events); speedscope puts it in
    time order."""
    for fmt in FORMATS:
        out = os.path.join(work, "timed." + fmt)
        p = run([LJM, "convert", "-q", "-f", fmt, "-o", out, prof], work)
        check(p.returncode == 0 and os.path.getsize(out) > 0,
              "--time stream as %s: exit %d, %r" % (fmt, p.returncode, p.stderr[-200:]))
    down = os.path.join(work, "timed-down.ljm")
    p = run([LJM, "convert", "-q", "-f", "ljm", "-o", down, prof], work)
    a, b = run([LJM, "report", prof], work), run([LJM, "report", down], work)
    check(p.returncode == 0 and a.returncode == 0 and a.stdout == b.stdout and "bursts.lua:5" in a.stdout,
          "--time stream: ljm report as its downgrade's, bursts.lua:5 in it")
    sp = open(os.path.join(work, "timed.speedscope"), encoding="utf-8").read()
    check("in time order" in sp, "--time stream: speedscope in time order")


def main():
    work = tempfile.mkdtemp(prefix="stacks-views-", dir=os.environ.get("TEST_TMPDIR"))
    check_chains(work)
    check_stream_names(work)
    check_jit(work)
    check_idle(work, "--stacks")
    check_time_views(check_idle(work, "--time"), work)
    return check.done(minimum=30)


if __name__ == "__main__":
    sys.exit(main())
