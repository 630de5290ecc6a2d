#!/usr/bin/env python3
"""torture_test.py -- recordings with call stacks must never hurt the host.

JIT-heavy scripts (testdata/recorder/torture/): the trace array growing
at a trace exit (trace_growth.lua, which crashed the host before the
recorder read everything before the real allocator ran), hundreds of
traces and side traces, jit.flush() and a small maxtrace flushing every
trace from a trace exit, stacks growing under traces, coroutines, errors,
FFI finalizers, FFI callbacks that allocate (whose stacks must read
callback <- C <- the line that called C), GC steps (torture.lua). Each is
recorded many times, since
a read of freed memory shows only some of the time:
- `ljm record --stacks`, on the VM under test;
- torture_host, a VM whose every block comes from malloc, so that under
  --config=asan AddressSanitizer sees any read of a freed VM block;
- `ljm record --stacks --stack-depth 3` (stacks cut at every event);
- sampled recordings with stacks at 256 bytes (`ljm record --sample`, and
  torture_host with LJM_TORTURE_SAMPLE): most allocator calls are not
  written, and the walker's caches must still follow every one of them;
- every third ljm record run of torture.lua (stacks, and sampled) under
  labels (LJM_TORTURE_LABELS: each phase in with_labels, labels set in
  coroutines, FFI callbacks, finalizers and around an error): the stream
  carries the phases' label sets.
Every run must exit 0, print the script's "ok" line, and leave a complete
stream that follows decoder/EXTENSION.md with trace frames in it.
usage: torture_test.py LJM_RECORD TORTURE_HOST SCRIPT..."""
import os
import shutil
import subprocess
import sys

import testlib

import ljmread  # tests/lib/ljmread.py, the shared stream reader

RUNS = int(os.environ.get("LJM_TORTURE_RUNS", "12"))

res = testlib.Results("torture")
tool = testlib.runfile(sys.argv[1])
host = testlib.runfile(sys.argv[2])
scripts = {os.path.basename(a): testlib.runfile(a) for a in sys.argv[3:]}
work = testlib.scratch("torture")
for s in scripts.values():
    shutil.copy(s, work)
env = testlib.vm_env()
env.setdefault("ASAN_OPTIONS", "detect_leaks=0")

CASES = [
    ("record", [tool, "--stacks", "-o", "OUT"], "trace_growth.lua", ["19"]),
    ("record", [tool, "--stacks", "-o", "OUT"], "torture.lua", ["2"]),
    ("host", [host, "OUT"], "trace_growth.lua", ["19"]),
    ("host", [host, "OUT"], "torture.lua", ["2"]),
    ("depth3", [tool, "--stacks", "--stack-depth", "3", "-o", "OUT"], "torture.lua", ["1"]),
    ("sampled", [tool, "--stacks", "--sample", "256", "-o", "OUT"], "torture.lua", ["2"]),
    ("sampled", [tool, "--stacks", "--sample", "256", "-o", "OUT"], "trace_growth.lua", ["19"]),
    ("sampled_host", [host, "OUT"], "torture.lua", ["2"]),
    ("sampled_host", [host, "OUT"], "trace_growth.lua", ["19"]),
]
FLAGS = {"sampled": 15, "sampled_host": 15}  # STACKS | TIME | SAMPLED | TYPES
# Every third run of ljm record on torture.lua is under labels
# (LJM_TORTURE_LABELS): with_labels around each phase and around an
# error, labels set in coroutines, FFI callbacks and finalizers.
LABELLED = ("record", "sampled")


def line_of(script, text):
    with open(scripts[script]) as f:
        return next(i for i, l in enumerate(f, 1) if text in l)


# Lua called back from C through the FFI (torture.lua's callbacks()): a
# line of the callback (or a trace), a C frame, then the line that called
# qsort.
CB_LINES = range(line_of("torture.lua", "local cmp = ffi.cast(cmp_t"),
                 line_of("torture.lua", "return x < y and -1") + 1)
CB_CALL = "@torture.lua:%d" % line_of("torture.lua", "ffi.C.qsort(")


def in_callback(label):
    if label.startswith("TRACE"):
        return True
    return label.startswith("@torture.lua:") and int(label.split(":")[1]) in CB_LINES


def callback_chain(st):
    for chain in st.chains():
        for k in range(len(chain) - 2):
            if chain[k + 2] == CB_CALL and chain[k + 1].startswith("C:") and in_callback(chain[k]):
                return True
    return False


for how, cmd, script, args in CASES:
    what = "%s %s" % (how, script)
    bad = []
    for i in range(RUNS if how != "depth3" else max(2, RUNS // 4)):
        out = os.path.join(work, "%s_%s_%d.ljm" % (how, script, i))
        argv = [out if a == "OUT" else a for a in cmd] + [script] + args
        run_env = dict(env, LJM_TORTURE_SAMPLE="256") if how == "sampled_host" else env
        labelled = how in LABELLED and script == "torture.lua" and i % 3 == 1
        if labelled:
            run_env = dict(env, LJM_TORTURE_LABELS="1")
        p = subprocess.run(argv, capture_output=True, text=True, cwd=work, env=run_env, timeout=600)
        if p.returncode != 0 or not p.stdout.startswith("ok"):
            bad.append("run %d: exit %d, stdout %r, stderr %r"
                       % (i, p.returncode, p.stdout[:80], p.stderr[-2000:]))
            continue
        st = ljmread.parse(open(out, "rb").read())
        if not st.complete or st.flags != FLAGS.get(how, 11) or st.problems:
            bad.append("run %d: complete %s, flags %#x, problems %s"
                       % (i, st.complete, st.flags, st.problems[:3]))
            continue
        if script == "torture.lua" and how != "depth3" and not callback_chain(st):
            bad.append("run %d: no stack callback <- C <- %s (an FFI callback)" % (i, CB_CALL))
        values = {dict(v).get(b"phase") for v in st.label_sets.values() if v}
        if labelled and not ({b"chunks", b"ffi", b"callbacks"} <= values and st.label_selections > 10):
            bad.append("run %d: label sets %s, %d selections" % (i, sorted(values, key=str)[:8],
                                                                st.label_selections))
        traces = sum(1 for parent, label in st.nodes.values() if label.startswith("TRACE"))
        if traces < (1 if how in ("depth3", "sampled", "sampled_host") else 10):
            bad.append("run %d: only %d trace frames" % (i, traces))
        if i > 1:
            os.remove(out)
    res.check(not bad, "%s: %d runs with trouble: %s" % (what, len(bad), bad[:2]))

res.finish()
