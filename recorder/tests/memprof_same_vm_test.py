#!/usr/bin/env python3
"""memprof_same_vm_test.py -- the recorder against Tarantool's own
misc.memprof on Tarantool's VM (the strongest fidelity test: same VM, same
scripts, only the profiler differs).

The scripts are the reference corpus's (corpus_rules.SCRIPTS) and the
same_vm ones (EXTRA: GC-paced and string-heavy work), run as the corpus
runs them: JIT off where they call jit.off(), on in jit_on and jit_flush.
testdata/recorder/same_vm/driver.lua runs each with its own
misc.memprof.start/stop calls made by the profiler under comparison, so
both record the same scope. `ljm report` of each stream gives the rows
(section x location; duplicate rows of a location summed).

1. Separate runs (the issue's rules). Each script runs once under the
VM's native memprof and once under require "ljm.recorder" holding an
8 MiB FFI block while it records (the native profiler keeps its 8 MiB
stream buffer in the Lua heap; GC pacing depends on it):
  - ALLOCATIONS INTERNAL and DEALLOCATIONS INTERNAL are left out: the
    native profiler adds alloc/free pairs of its own there (an ELF symbol
    rescan per C-function event);
  - every other row with 100 or more events on either side must agree
    within 2% of the native count or 8 events, whichever is larger;
  - rows that only address reuse tells apart are summed first (MERGE):
    dynload.lua loads chunks and lets most of them die, then loads and
    collects 200 one-line chunks "return {i}". A report charges each
    event to the name announced first for its prototype's address (as
    Tarantool's parser does), so those 200 chunks' events go to whichever
    dead chunk first had their address ("return {1}:1", or
    "@virtual/file.lua:1" on the non-GC64 VM), and which one depends on the
    heap's layout, which the two runs do not share: the native profiler
    allocates from the Lua heap when it starts (its context, its buffer,
    the ELF tables it reads to dump C symbols), the recorder a few small
    objects and the block the driver holds. Every location outside
    dynload.lua itself (INTERNAL aside) is summed into one row.
Bytes are compared by the same rule but only reported: the string table
grows (a new hash array, kilobytes to megabytes) at whichever line first
pushes the number of live strings past its size, and when it does depends
on GC pacing, so bytes move between rows at one event.

2. One run recorded by both (beyond the issue's rules): the native
profiler started first, the recorder wrapping its allocator, so both see
the same allocations. Every row of a Lua line or a trace must be equal,
events and bytes, whatever its count. Left out: INTERNAL (the native
profiler's own allocations, seen by the recorder too) and C locations
(named differently by design: the recorder names built-ins of the
stripped VM by their Lua names, package.loaders[2], where the native
report takes the nearest ELF symbol below, luaopen_os; and the native
stream sees the recorder's own start as a C function of the module).

Either part comparing fewer than MIN_ROWS rows in a run is a failure, as
is a script that fails or writes to stderr (an error in a finalizer is
only printed).

usage: memprof_same_vm_test.py [--runs N] SOFILE LJM CMOD_SO CORPUS_FILE... SAME_VM_FILE...
(run on a Tarantool VM only: LJM_TEST_VM, LJM_TEST_FLAVOUR tarantool*)"""
import os
import re
import shutil
import subprocess
import sys

import corpus_rules
import testlib

SECTIONS = ("ALLOCATIONS", "REALLOCATIONS", "DEALLOCATIONS")
# The native profiler's own churn (see above).
LEFT_OUT = {("ALLOCATIONS", "INTERNAL"), ("DEALLOCATIONS", "INTERNAL")}
MIN_EVENTS = 100  # rows compared: this many events on either side
REL, ABS = 0.02, 8  # tolerance: the larger of 2% of the native count, 8 events
MIN_ROWS = 10  # per run, over all scripts
# Scripts of our own (testdata/recorder/same_vm), run after the corpus's.
EXTRA = ["gc_pacing", "strings"]
# script -> (pattern, row name): locations summed into one row.
MERGE = {"dynload": (re.compile(r"^(?!@dynload\.lua:|INTERNAL$)"), "(chunks dynload.lua loads)")}
# A C location: "name:0xADDR" (the symbol's address), "CFUNC 0xADDR".
C_ROW = re.compile(r"(:|^CFUNC )0x[0-9a-f]+$")
ROW = re.compile(r"^(.*): (\d+) events\t\+(\d+)B\t-(\d+)B$")

res = testlib.Results("memprof_same_vm")
argv = sys.argv[1:]
runs = 1
if argv[:1] == ["--runs"]:
    runs, argv = int(argv[1]), argv[2:]
so, ljm, cmod = (testlib.runfile(a) for a in argv[:3])
files = [testlib.runfile(a) for a in argv[3:]]
corpus = os.path.dirname([f for f in files if f.endswith("/v3/test.lua")][0])
same_vm = os.path.dirname([f for f in files if f.endswith("/same_vm/driver.lua")][0])

flavour = os.environ.get("LJM_TEST_FLAVOUR", "")
if not (testlib.VM and flavour.startswith("tarantool")):
    res.check(False, "needs Tarantool's VM (LJM_TEST_VM set, LJM_TEST_FLAVOUR tarantool*): "
              "VM %r, flavour %r" % (testlib.VM, flavour))
    res.finish()

work = testlib.scratch("memprof_same_vm")
shutil.rmtree(work)
shutil.copytree(corpus, work)
for f in os.listdir(same_vm):
    shutil.copy(os.path.join(same_vm, f), work)
os.makedirs(os.path.join(work, "cmod"), exist_ok=True)
shutil.copy(cmod, os.path.join(work, "cmod", "memprof_cmod.so"))
env = testlib.module_cpath(so, "memprof_same_vm_cpath")

p = subprocess.run([testlib.VM, "-e", 'print(require("ljm.recorder").build(), '
                    'type(misc) == "table" and type(misc.memprof) == "table")'],
                   capture_output=True, text=True, env=env, timeout=60)
res.check(testlib.build_is_vm_flavour(p.stdout) and p.stdout.rstrip().endswith("\ttrue"),
          "a Tarantool VM with misc.memprof, the recorder picks its build: %r"
          % (p.stdout + p.stderr))


def report(script, stream, merged=True):
    """rows[(section, location)] = [events, +bytes, -bytes], `ljm report`'s
    rows of a location (and, if merged, of a MERGE) summed; None if the
    report failed."""
    merge = MERGE.get(script) if merged else None
    p = subprocess.run([ljm, "report", "--strict", "-q", stream], capture_output=True,
                       text=True, timeout=600)
    if not res.check(p.returncode == 0, "ljm report %s: exit %d: %s"
                     % (stream, p.returncode, p.stderr.strip())):
        return None
    rows, sec = {}, None
    for line in p.stdout.splitlines():
        if line in SECTIONS:
            sec = line
        elif line.startswith("HEAP SUMMARY"):
            sec = None
        else:
            m = ROW.match(line)
            if sec and m:
                loc = m.group(1)
                if merge and merge[0].match(loc):
                    loc = merge[1]
                r = rows.setdefault((sec, loc), [0, 0, 0])
                for i in range(3):
                    r[i] += int(m.group(i + 2))
    return rows


def record(script, mode, run):
    """Runs script under the driver with mode's profiler(s): the path of
    the stream written, or None. "native" and "ljmkit" are as long: the
    driver's strings must weigh the same. Each run writes to a directory
    with a name one character longer than the last, which moves GC steps a
    little (the driver's OUT string): --runs samples how much counts vary
    with that."""
    out = os.path.join(work, "run" + "-" * run, "%s.%s.ljm" % (script, mode))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    for f in (out, out + ".native"):
        if os.path.exists(f):
            os.unlink(f)
    p = subprocess.run([testlib.VM, "driver.lua", mode, script + ".lua", out], cwd=work,
                       capture_output=True, text=True, timeout=600, env=env)
    # Nothing on stderr either: an error in a finalizer is only printed.
    if not res.check(p.returncode == 0 and not p.stderr and os.path.exists(out),
                     "%s, %s: exit %d: %s" % (script, mode, p.returncode,
                                               (p.stdout + p.stderr).strip()[:2000])):
        return None
    return out


def tolerance(ref):
    return max(REL * ref, ABS)


def off(ref, ours):
    return (abs(ours - ref), abs(ours - ref) / ref if ref else float("inf"))


def bytes_off(n, o):
    """How far our bytes are from the native ones (the larger of the +B
    and -B differences, relative to the native figure)."""
    return max(abs(o[i] - n[i]) / n[i] if n[i] else (0 if o[i] == 0 else float("inf"))
               for i in (1, 2))


def show(rows):
    print("  %-14s %-46s %9s %9s %12s %12s %12s %12s" % (
        "section", "location", "native", "ljm", "native +B", "ljm +B", "native -B", "ljm -B"))
    for (sec, loc), n, o, ok in rows:
        print("%s %-14s %-46s %9d %9d %12d %12d %12d %12d" % (
            " " if ok else "!", sec, loc, n[0], o[0], n[1], o[1], n[2], o[2]))


def ordered(keys):
    return sorted(keys, key=lambda k: (SECTIONS.index(k[0]), k[1]))


def separate(s, run):
    """Part 1: the script run once per profiler; rows within the tolerance.
    Returns the number of rows compared."""
    native, ours = record(s, "native", run), record(s, "ljmkit", run)
    if native is None or ours is None:
        return 0
    native, ours = report(s, native), report(s, ours)
    if native is None or ours is None:
        return 0
    rows, bad = [], 0
    for key in ordered(set(native) | set(ours)):
        if key in LEFT_OUT:
            continue
        n, o = native.get(key, [0, 0, 0]), ours.get(key, [0, 0, 0])
        if max(n[0], o[0]) < MIN_EVENTS:
            continue
        ok = abs(o[0] - n[0]) <= tolerance(n[0])
        bad += not ok
        rows.append((key, n, o, ok))
        w = (s,) + key
        d = off(n[0], o[0])
        if w not in worst or d > worst[w][:2]:
            worst[w] = d + (n[0], o[0])
        b = bytes_off(n, o)
        if w not in worst_bytes or b > worst_bytes[w][0]:
            worst_bytes[w] = (b, n, o)
    print("run %d %s: %d rows compared, %d off" % (run, s, len(rows), bad))
    if not res.check(not bad, "run %d %s: %d of %d rows differ by more than max(%d%%, %d events)"
                     % (run, s, bad, len(rows), REL * 100, ABS)):
        show(rows)
    return len(rows)


def shared(s, run):
    """Part 2: both profilers recording the same run (the native one
    started first, ljmkit wrapping its allocator): every Lua and trace row
    equal, events and bytes. Returns the number of rows compared."""
    out = record(s, "both", run)
    if out is None:
        return 0
    native, ours = report(s, out + ".native", False), report(s, out, False)
    if native is None or ours is None:
        return 0
    rows, bad = [], 0
    for key in ordered(set(native) | set(ours)):
        if key[1] == "INTERNAL" or C_ROW.search(key[1]):
            continue
        n, o = native.get(key, [0, 0, 0]), ours.get(key, [0, 0, 0])
        ok = n == o
        bad += not ok
        rows.append((key, n, o, ok))
    print("run %d %s, one run recorded by both: %d rows compared, %d off"
          % (run, s, len(rows), bad))
    if not res.check(not bad, "run %d %s, one run recorded by both: %d of %d rows differ"
                     % (run, s, bad, len(rows))):
        show(rows)
    return len(rows)


worst = {}  # (script, section, location) -> (abs, rel, native, ours): events, worst run
worst_bytes = {}  # the same key -> (relative, native row, our row): bytes, worst run
scripts = corpus_rules.SCRIPTS + EXTRA
for run in range(runs):
    compared = sum(separate(s, run) for s in scripts)
    res.check(compared >= MIN_ROWS, "run %d: %d rows compared (at least %d)"
              % (run, compared, MIN_ROWS))
    compared = sum(shared(s, run) for s in scripts)
    res.check(compared >= MIN_ROWS, "run %d, recorded by both: %d rows compared (at least %d)"
              % (run, compared, MIN_ROWS))

print("events, largest differences per row over %d run(s):" % runs)
for w, (a, r, n, o) in sorted(worst.items(), key=lambda kv: (-kv[1][1], -kv[1][0]))[:10]:
    print("  %-15s %-14s %-44s native %7d ljm %7d  %+d (%.2f%%)" % (w + (n, o, o - n, 100 * r)))
if worst:
    w, (a, r, n, o) = max(worst.items(), key=lambda kv: kv[1][0])
    print("  largest absolute: %s %s %s: native %d, ljm %d" % (w + (n, o)))
off_bytes = sorted((kv for kv in worst_bytes.items() if kv[1][0] > REL),
                   key=lambda kv: -kv[1][0])
print("bytes (reported only): %d of %d rows within %d%% in every run; the others, worst run:"
      % (len(worst_bytes) - len(off_bytes), len(worst_bytes), REL * 100))
for w, (b, n, o) in off_bytes:
    print("  %-15s %-14s %-44s +B %d/%d -B %d/%d (native/ljm)" % (w + (n[1], o[1], n[2], o[2])))
res.finish()
