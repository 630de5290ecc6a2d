"""budget_test.py LJM RECORDER_SO GEN_BIG FIXED_SEED_SO DRIVER_LUA BINARY_TREES_LUA BUDGETS [--update]

The cost guard: counts instructions (valgrind: the same count for the same
binaries, input and environment; tests/lib/valgrind_count.py) and fails
when a figure exceeds its budget in BUDGETS (bench/budgets.txt) by more
than 3%.

Figures, each the difference of two sizes of one input over the difference
of their calls or events (what a start, a stop or a process's start-up
costs cancels out):
  recorder.standard/stacks/time/sampled  instructions per allocator call
      that recording adds to binary_trees.lua (JIT off, depths 9 and 10) on
      the VM of LJM_TEST_VM (Debian 12's luajit tree, built here), through
      require "ljm.recorder": the exact standard stream, the exact one with
      stacks, the exact one with time marks only ({time = true}), and
      {sample = "512k", stacks = true} with a fixed seed;
      counted outside the VM's own code (valgrind_count.beside_vm), in a
      fixed environment, with LuaJIT's string hash seeded the same every run
      (FIXED_SEED_SO), per call the VM made to the mode's allocator;
  report/pprof/heaptrack  instructions per event of `ljm report`, `ljm
      convert -o X.pb.gz` and `ljm convert -o X.heaptrack.zst` on gen_big's
      extended stream (--stacks, 20,000 and 60,000 iterations), every
      instruction of the process.

Budgets are kept per compiler (the "clang version" in RECORDER_SO's
.comment section): code built by another compiler counts other numbers.
--update (bazel run //bench:budget_test -- --update) writes the measured
figures as this compiler's budgets into the workspace's bench/budgets.txt.
"""
import os
import re
import subprocess
import sys
import tempfile

import ljmread
import testlib
import valgrind_count

ROOM = 1.03  # a figure may exceed its budget by 3%
SAMPLE_SEED = "7"


def compiler(path):
    """The compiler named in a binary's .comment section."""
    m = re.search(rb"clang version (\d+)\.\d+", open(path, "rb").read())
    if not m:
        sys.exit("FAIL budget_test: no clang version in %s's .comment" % path)
    return "clang-" + m.group(1).decode()


def count(fn, cmd, *args, **kw):
    try:
        return fn(cmd, *args, **kw)
    except valgrind_count.CountError as e:
        sys.exit("FAIL budget_test: %s" % e)


def events(path):
    st = ljmread.parse(open(path, "rb").read())
    if not st.complete or st.problems:
        sys.exit("FAIL budget_test: %s: %s" % (path, st.problems[:3] or "incomplete"))
    return len(st.events)


# What the clock paces rather than the calls is left out, or the figures
# would follow the machine's speed (a loaded machine runs slower under
# valgrind, and the same run gets more time marks): the recorder's own
# threads (writer, ticker) and the time marks with their RSS samples.
PACED = {"main_thread": True, "exclude": ("rec_ext_mark",)}

# The allocator each mode installs: its calls from the VM are the calls the
# figure is per, counted in each run. LuaJIT seeds its string hash at
# random, and with it how far the collector gets before stop() (the frees
# recorded): fixed_seed.so makes the runs repeat.
WRAPPER = {"rec": "rec_alloc_exact", "stacks": "rec_alloc_exact", "time": "rec_alloc_exact",
           "sampled": "rec_alloc"}


def recorder_figures(so, seed_so, driver, work, tmp):
    """Instructions per allocator call that each recording mode adds."""
    os.makedirs(os.path.join(tmp, "ljm"))
    os.symlink(os.path.abspath(so), os.path.join(tmp, "ljm", "recorder.so"))
    # The same environment wherever it runs (bazel test or run): what the
    # process starts with moves its memory, and the caches the recorder
    # keys by address count a little differently with it.
    env = testlib.vm_env({"PATH": "/usr/bin:/bin", "LANG": "C",
                          "LUA_CPATH": os.path.join(tmp, "?.so") + ";;",
                          "LJM_BENCH_SEED": SAMPLE_SEED,
                          "LD_PRELOAD": os.path.abspath(seed_so)})
    out = os.path.join(tmp, "out.ljm")
    cg = os.path.join(tmp, "callgrind.out")
    depths = ("9", "10")
    plain = {}
    for d in depths:
        plain[d] = count(valgrind_count.beside_vm, [testlib.LUAJIT, driver, "off", work, d], cg, env,
                         **PACED)
    figs = {}
    for mode, name in (("rec", "standard"), ("stacks", "stacks"), ("time", "time"),
                       ("sampled", "sampled")):
        added, calls = {}, {}
        for d in depths:
            n, calls[d] = count(valgrind_count.beside_vm, [testlib.LUAJIT, driver, mode, work, d, out],
                                cg, env, calls_to=WRAPPER[mode], **PACED)
            added[d] = n - plain[d]
            if mode != "sampled" and events(out) != calls[d]:  # the count is the stream's
                sys.exit("FAIL budget_test: %s at depth %s: %d calls to %s, %d events recorded"
                         % (mode, d, calls[d], WRAPPER[mode], events(out)))
        if calls["10"] <= calls["9"]:
            sys.exit("FAIL budget_test: %s: no more calls at depth 10 (%d) than at 9 (%d)"
                     % (mode, calls["10"], calls["9"]))
        figs["recorder." + name] = (added["10"] - added["9"]) / (calls["10"] - calls["9"])
    return figs


def reader_figures(ljm, gen_big, tmp):
    """Instructions per event of ljm report and two exporters."""
    streams, evs = {}, {}
    for it in ("20000", "60000"):
        streams[it] = os.path.join(tmp, "big%s.ljm" % it)
        subprocess.run([gen_big, "--stacks", "--iterations", it, streams[it]],
                       check=True, stderr=subprocess.DEVNULL)
        evs[it] = events(streams[it])
    figs = {}
    for name, cmd in (("report", lambda s: [ljm, "report", "-q", s]),
                      ("pprof", lambda s: [ljm, "convert", "-q", "-o",
                                           os.path.join(tmp, "o.pb.gz"), s]),
                      ("heaptrack", lambda s: [ljm, "convert", "-q", "-o",
                                               os.path.join(tmp, "o.heaptrack.zst"), s])):
        n = {it: count(valgrind_count.instructions, cmd(s)) for it, s in streams.items()}
        figs[name] = (n["60000"] - n["20000"]) / (evs["60000"] - evs["20000"])
    return figs


def read_budgets(path):
    """{compiler: {figure: budget}} from the budgets file."""
    out, cur = {}, None
    for no, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"\[([\w.-]+)\]", line)
        if m:
            cur = out.setdefault(m.group(1), {})
            continue
        f = line.split()
        if cur is None or len(f) != 2:
            sys.exit("FAIL budget_test: %s:%d: expected '[compiler]' or 'figure budget'" % (path, no))
        cur[f[0]] = float(f[1])
    return out


def write_budgets(path, comp, figs):
    """Replaces comp's section of the budgets file with figs, rest kept."""
    lines = open(path).read().split("\n")
    start = next((i for i, l in enumerate(lines) if l.strip() == "[%s]" % comp), None)
    new = ["[%s]" % comp] + ["%-20s %.1f" % (k, v) for k, v in sorted(figs.items())]
    if start is None:
        while lines and not lines[-1].strip():
            lines.pop()
        lines += [""] + new + [""]
    else:
        end = start + 1
        while end < len(lines) and not lines[end].startswith("["):
            end += 1
        tail = lines[end:]
        lines = lines[:start] + new + ([""] if tail else [""]) + tail
    open(path, "w").write("\n".join(lines).rstrip("\n") + "\n")


def main():
    ljm, so, gen_big, seed_so, driver, work, budgets = sys.argv[1:8]
    update = "--update" in sys.argv[8:]
    comp = compiler(so)
    with tempfile.TemporaryDirectory(prefix="ljm-budget-", dir="/tmp") as tmp:
        figs = recorder_figures(so, seed_so, driver, work, tmp)
        figs.update(reader_figures(ljm, gen_big, tmp))
    if update:
        ws = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
        if not ws:
            sys.exit("budget_test --update: run it with bazel run //bench:budget_test -- --update")
        path = os.path.join(ws, "bench", "budgets.txt")
        write_budgets(path, comp, figs)
        for k, v in sorted(figs.items()):
            print("%-20s %10.1f" % (k, v))
        print("budget_test: %s's budgets written to %s" % (comp, path))
        return
    known = read_budgets(budgets)
    if comp not in known:
        sys.exit("FAIL budget_test: no budgets for %s in bench/budgets.txt (it has %s); record them"
                 " with: bazel run //bench:budget_test -- --update"
                 % (comp, ", ".join(sorted(known)) or "none"))
    mine, bad = known[comp], []
    for k, v in sorted(figs.items()):
        b = mine.get(k)
        if b is None:
            bad.append("%s has no budget" % k)
            print("%-20s %10.1f  (no budget)" % (k, v))
            continue
        note = ""
        if v > b * ROOM:
            bad.append("%s %.1f is %.1f%% over its budget %.1f" % (k, v, 100 * (v / b - 1), b))
            note = "  OVER"
        elif v < b / ROOM:
            note = "  (more than 3% under: lower the budget)"
        print("%-20s %10.1f  budget %10.1f  %.3fx%s" % (k, v, b, v / b, note))
    for k in sorted(set(mine) - set(figs)):
        bad.append("budget %s is measured by nothing" % k)
    if bad:
        sys.exit("FAIL budget_test (%s): %s. A change that must cost more raises the budget in"
                 " the same commit and says why (doc/testing.md, 'Cost budgets')"
                 % (comp, "; ".join(bad)))
    print("budget_test: %d figures within 3%% of %s's budgets" % (len(figs), comp))


if __name__ == "__main__":
    main()
