#!/usr/bin/env python3
"""sampling_cost.py -- what sampled recording costs (issue 23: at most 1.05x).

usage: python3 bench/recorder/sampling_cost.py [--reps N] [--rate 512k] [--so PATH]
       (after: bazel build -c opt //recorder:ljm/recorder.so)

binary-trees (depth 15, JIT off, stock /usr/bin/luajit) runs plain and
recorded with require "ljm.recorder" start(path, {sample = RATE, stacks =
true}), interleaved, N times each (default 15); the ratio of the best wall
times is the cost (the minimum is what other processes disturb least), the
medians are printed too. Also the stream's size and bytes per second.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def main():
    reps = int(arg("--reps", "15"))
    rate = arg("--rate", "512k")
    so = arg("--so", os.path.join(ROOT, "bazel-bin", "recorder", "ljm", "recorder.so"))
    if not os.path.exists(so):
        sys.exit("sampling_cost: %s not found; bazel build -c opt //recorder:ljm/recorder.so" % so)
    tmp = tempfile.mkdtemp(prefix="ljm-sampling-")
    os.makedirs(os.path.join(tmp, "ljm"))
    shutil.copy(so, os.path.join(tmp, "ljm", "recorder.so"))
    env = dict(os.environ, LUA_CPATH=os.path.join(tmp, "?.so") + ";;", LJM_BENCH_SAMPLE=rate)
    out = os.path.join("/dev/shm" if os.path.isdir("/dev/shm") else tmp, "ljm-sampling-%d.ljm" % os.getpid())
    driver = os.path.join(HERE, "driver.lua")
    work = os.path.join(HERE, "binary_trees.lua")
    walls = {"off": [], "sampled": []}
    tcpu = {"off": [], "sampled": []}
    size = 0
    for _ in range(reps):
        for mode in ("off", "sampled"):
            p = subprocess.run(["luajit", driver, mode, work, "15", out], env=env,
                               capture_output=True, text=True, check=True)
            walls[mode].append(float(p.stdout.split()[0]))
            tcpu[mode].append(float(p.stdout.split()[2]))
            if mode == "sampled":
                size = os.path.getsize(out)
    best = {k: min(v) for k, v in walls.items()}
    med = {k: statistics.median(v) for k, v in walls.items()}
    print("binary-trees 15, JIT off, sample %s with stacks, %d interleaved runs each" % (rate, reps))
    print("  plain    best %.3f s  median %.3f s" % (best["off"], med["off"]))
    print("  sampled  best %.3f s  median %.3f s" % (best["sampled"], med["sampled"]))
    print("  ratio    best %.3fx   median %.3fx  (target <= 1.05x)"
          % (best["sampled"] / best["off"], med["sampled"] / med["off"]))
    print("  thread CPU: best %.3f s vs %.3f s, ratio %.3fx (the program's own thread)"
          % (min(tcpu["sampled"]), min(tcpu["off"]), min(tcpu["sampled"]) / min(tcpu["off"])))
    print("  stream   %d bytes, %.0f bytes/s" % (size, size / best["sampled"]))
    os.unlink(out)
    shutil.rmtree(tmp)


main()
