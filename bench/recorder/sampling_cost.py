#!/usr/bin/env python3
"""sampling_cost.py -- what sampled recording costs (target: at most 1.05x).

usage: python3 bench/recorder/sampling_cost.py [--reps N] [--pairs N] [--rate 512k]
           [--so PATH] [--pass PATH] [--ljm PATH] [--instructions] [--only 1,2,2b,3]
       (after: bazel build -c opt //recorder:ljm/recorder.so //bench:ljm_bench_pass.so //cli:ljm)

Three measures of binary-trees with the JIT off, stock /usr/bin/luajit,
recorded through require "ljm.recorder" with {sample = RATE, stacks = true}:

1. Whole runs (the target's measure): depth 15 plain and recorded, from
   before start() to after stop(), interleaved, N times each (default 15);
   the ratio of the best wall times, the ratio of the medians, the median
   of the rounds' ratios (each run against the plain run of its own round:
   a round takes about 2 s, so the VM's drift, which moves best-of and
   medians by several percent, mostly cancels), and the stream's size. Two controls run
   in the same interleaving: the plain run again (the noise of the
   measure) and the module loaded but not started (loading a C module
   moves LuaJIT's arena in the address space; minor page faults are
   printed per mode).
2. Steady cost, paired (bench/recorder/paired.lua): in one process, N pairs
   (default 300) of depth-10 runs, one recorded and one not, side by side;
   the quartiles of the pairs' thread-CPU ratios, for sampled recording with
   and without stacks and for a bare lua_setallocf pass-through
   (bench/recorder/passthrough.c: the floor of any wrapper design); the
   start + stop time apart. On a VM whose speed drifts between seconds,
   neighbouring short runs agree within a few percent where best-of-N of
   long runs does not (figures: bench/RESULTS.md).
2b. With --ljm PATH (the ljm CLI): the command users run, `ljm record
   --sample RATE --stacks binary_trees.lua 15`, against `luajit
   binary_trees.lua 15`: whole processes (startup included), JIT off through
   LUA_INIT, interleaved, with the plain run again as the control; minor page
   faults per run.
3. --instructions: instructions executed (valgrind's cachegrind; exact and
   repeatable) for depth 13 plain and recorded, whole processes; and the
   wrapper's own instructions per call (callgrind).
--only 2b,1 runs only those measures (default: all of them).
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


BLOCK = 5


def block_best(walls, name):
    """Best-of per block of BLOCK consecutive rounds, mode against plain; the
    median over the blocks. The best of a whole sitting is one run's luck on
    a VM whose speed swings by 20%; blocks repeat the measure."""
    a, b = walls[name], walls["off"]
    ratios = [min(a[i:i + BLOCK]) / min(b[i:i + BLOCK])
              for i in range(0, len(b) - BLOCK + 1, BLOCK)]
    return statistics.median(ratios), len(ratios)


def whole_runs(env, out, reps, rate):
    """The target's measure, with two controls in the same interleaving: the
    plain run again (the measure's own noise) and the module loaded but not
    started (what loading any C module does to the process's memory map:
    LuaJIT's arena lands elsewhere and faults other pages)."""
    driver = os.path.join(HERE, "driver.lua")
    work = os.path.join(HERE, "binary_trees.lua")
    modes = (("off", "off"), ("again", "off"), ("loaded", "loaded"), ("sampled", "sampled"))
    walls = {k: [] for k, _ in modes}
    faults = {k: [] for k, _ in modes}
    size = 0
    for i in range(reps):
        for name, mode in (modes if i % 2 == 0 else modes[::-1]):
            p = subprocess.run(["luajit", driver, mode, work, "15", out], env=env,
                               capture_output=True, text=True, check=True)
            f = p.stdout.split()
            walls[name].append(float(f[0]))
            faults[name].append(int(f[3]))
            if mode == "sampled":
                size = os.path.getsize(out)
    best = {k: min(v) for k, v in walls.items()}
    med = {k: statistics.median(v) for k, v in walls.items()}
    # Each mode against the plain run of the same round.
    rounds = {k: statistics.median(a / b for a, b in zip(v, walls["off"]))
              for k, v in walls.items()}
    print("1. whole runs: binary-trees 15, sample %s with stacks, %d interleaved runs each"
          % (rate, reps))
    for name, label in (("off", "plain"), ("again", "plain again"), ("loaded", "module loaded"),
                        ("sampled", "sampled")):
        print("  %-14s best %.3f s  median %.3f s  page faults %d"
              % (label, best[name], med[name], statistics.median(faults[name])))
    print("  ratio          best %.3fx   median %.3fx   rounds' median %.3fx  (target <= 1.05x)"
          % (best["sampled"] / best["off"], med["sampled"] / med["off"], rounds["sampled"]))
    print("  controls       plain again / plain: best %.3fx median %.3fx rounds' median %.3fx (noise);"
          " module loaded / plain: best %.3fx median %.3fx rounds' median %.3fx;"
          " sampled / module loaded: best %.3fx median %.3fx"
          % (best["again"] / best["off"], med["again"] / med["off"], rounds["again"],
             best["loaded"] / best["off"], med["loaded"] / med["off"], rounds["loaded"],
             best["sampled"] / best["loaded"], med["sampled"] / med["loaded"]))
    blk, nblk = block_best(walls, "sampled")
    print("  best-of in blocks of %d rounds: median %.3fx over %d blocks; control (plain again) %.3fx"
          % (BLOCK, blk, nblk, block_best(walls, "again")[0]))
    print("  stream         %d bytes, %.0f bytes/s" % (size, size / best["sampled"]))


def paired(env, out, pairs, rate):
    script = os.path.join(HERE, "paired.lua")
    rows = [("sampled, stacks", "sampled", "1"), ("sampled, no stacks", "sampled", "0"),
            ("bare pass-through", "pass", "1")]
    got = {}
    print("2. steady cost, paired: %d pairs of binary-trees 10 in one process, thread CPU"
          % pairs)
    for name, mode, stacks in rows:
        e = dict(env, LJM_BENCH_STACKS=stacks)
        p = subprocess.run(["luajit", script, mode, "10", str(pairs), out], env=e,
                           capture_output=True, text=True, check=True)
        q1, med, q3, edge = (float(x) for x in p.stdout.split())
        got[name] = med
        extra = "  start + stop %.1f ms" % edge if mode == "sampled" else ""
        print("  %-19s median %.3fx  (quartiles %.3fx .. %.3fx)%s" % (name, med, q1, q3, extra))
    floor = got["bare pass-through"]
    print("  over the pass-through floor: stacks %.3fx, no stacks %.3fx"
          % (got["sampled, stacks"] / floor, got["sampled, no stacks"] / floor))


def cli_runs(env, out, reps, rate, ljm):
    """ljm record against luajit, whole processes, interleaved as whole_runs."""
    work = os.path.join(HERE, "binary_trees.lua")
    e = dict(env, LUA_INIT="jit.off()")
    modes = (("off", ["luajit", work, "15"]), ("again", ["luajit", work, "15"]),
             ("sampled", [ljm, "record", "--sample", rate, "--stacks", "-o", out, work, "15"]))
    walls = {k: [] for k, _ in modes}
    faults = {k: [] for k, _ in modes}
    for i in range(reps):
        for name, cmd in (modes if i % 2 == 0 else modes[::-1]):
            t = time.perf_counter()
            p = subprocess.Popen(cmd, env=e, stdout=subprocess.DEVNULL)
            _, status, ru = os.wait4(p.pid, 0)
            if status:
                raise SystemExit("sampling_cost: %s exited with %d" % (" ".join(cmd), status))
            walls[name].append(time.perf_counter() - t)
            faults[name].append(ru.ru_minflt)
    best = {k: min(v) for k, v in walls.items()}
    med = {k: statistics.median(v) for k, v in walls.items()}
    rounds = {k: statistics.median(a / b for a, b in zip(v, walls["off"]))
              for k, v in walls.items()}
    print("2b. ljm record --sample %s --stacks binary_trees.lua 15 against luajit, whole"
          " processes, %d interleaved runs each" % (rate, reps))
    for name, label in (("off", "luajit"), ("again", "luajit again"), ("sampled", "ljm record")):
        print("  %-14s best %.3f s  median %.3f s  page faults %d"
              % (label, best[name], med[name], statistics.median(faults[name])))
    print("  ratio          best %.3fx   median %.3fx   rounds' median %.3fx  (target <= 1.05x)"
          % (best["sampled"] / best["off"], med["sampled"] / med["off"], rounds["sampled"]))
    print("  control        luajit again / luajit: best %.3fx median %.3fx rounds' median %.3fx"
          % (best["again"] / best["off"], med["again"] / med["off"], rounds["again"]))
    blk, nblk = block_best(walls, "sampled")
    print("  best-of in blocks of %d rounds: median %.3fx over %d blocks; control (luajit again) %.3fx"
          % (BLOCK, blk, nblk, block_best(walls, "again")[0]))


def instructions(env, out):
    if not shutil.which("valgrind"):
        print("3. instructions: valgrind not found, skipped")
        return
    driver = os.path.join(HERE, "driver.lua")
    work = os.path.join(HERE, "binary_trees.lua")

    def ir(cmd):
        p = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                            "--cachegrind-out-file=/dev/null"] + cmd, env=env,
                           capture_output=True, text=True, check=True)
        for line in p.stderr.splitlines():
            if "I   refs:" in line or "I refs:" in line:
                return int(line.split()[-1].replace(",", ""))
        raise SystemExit("sampling_cost: no instruction count from valgrind")

    off = ir(["luajit", driver, "off", work, "13", out])
    sampled = ir(["luajit", driver, "sampled", work, "13", out])
    print("3. instructions (cachegrind), binary-trees 13 start to end of process:")
    print("  plain %d, sampled with stacks %d: %.3fx" % (off, sampled, sampled / off))
    own, calls = wrapper_instructions(env, out, driver, work)
    print("  the wrapper's fast path (callgrind, rec_alloc's self cost: not rec_alloc_slow):"
          " %d over %d calls, %.1f a call"
          % (own, calls, own / calls))


def wrapper_instructions(env, out, driver, work):
    """rec_alloc's self instructions and its calls, from a callgrind profile:
    its function id (named where it first appears), the calls= lines after
    each call to it, and callgrind_annotate's self cost."""
    prof = out + ".callgrind"
    try:
        subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + prof,
                        "luajit", driver, "sampled", work, "13", out], env=env,
                       capture_output=True, text=True, check=True)
        with open(prof) as f:
            text = f.read()
        ann = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", prof],
                             capture_output=True, text=True, check=True).stdout
    finally:
        if os.path.exists(prof):
            os.unlink(prof)
    m = re.search(r"^c?fn=\((\d+)\) rec_alloc$", text, re.M)
    own = re.search(r"^\s*([\d,]+) .*:rec_alloc \[", ann, re.M)
    if not m or not own:
        raise SystemExit("sampling_cost: rec_alloc not found in the callgrind profile")
    calls = sum(int(c) for c in re.findall(r"^cfn=\(%s\).*\ncalls=(\d+)" % m.group(1), text, re.M))
    if not calls:
        raise SystemExit("sampling_cost: no call of rec_alloc in the callgrind profile")
    return int(own.group(1).replace(",", "")), calls


def main():
    reps = int(arg("--reps", "15"))
    pairs = int(arg("--pairs", "300"))
    rate = arg("--rate", "512k")
    so = arg("--so", os.path.join(ROOT, "bazel-bin", "recorder", "ljm", "recorder.so"))
    pso = arg("--pass", os.path.join(ROOT, "bazel-bin", "bench", "ljm_bench_pass.so"))
    ljm = arg("--ljm", None)
    for f, target in ((so, "//recorder:ljm/recorder.so"), (pso, "//bench:ljm_bench_pass.so")):
        if not os.path.exists(f):
            sys.exit("sampling_cost: %s not found; bazel build -c opt %s" % (f, target))
    tmp = tempfile.mkdtemp(prefix="ljm-sampling-")
    os.makedirs(os.path.join(tmp, "ljm"))
    shutil.copy(so, os.path.join(tmp, "ljm", "recorder.so"))
    shutil.copy(pso, os.path.join(tmp, "ljm_bench_pass.so"))
    env = dict(os.environ, LUA_CPATH=os.path.join(tmp, "?.so") + ";;", LJM_BENCH_SAMPLE=rate)
    out = os.path.join("/dev/shm" if os.path.isdir("/dev/shm") else tmp,
                       "ljm-sampling-%d.ljm" % os.getpid())
    only = arg("--only", "1,2,2b,3").split(",")
    try:
        if "1" in only:
            whole_runs(env, out, reps, rate)
        if "2" in only:
            paired(env, out, pairs, rate)
        if ljm and "2b" in only:
            cli_runs(env, out, reps, rate, os.path.abspath(ljm))
        if "--instructions" in sys.argv and "3" in only:
            instructions(env, out)
    finally:
        if os.path.exists(out):
            os.unlink(out)
        shutil.rmtree(tmp)


main()
