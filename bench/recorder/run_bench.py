#!/usr/bin/env python3
"""run_bench.py -- overhead of the recorder on allocation-heavy workloads.

usage: PYTHONPATH=tests/lib python3 bench/recorder/run_bench.py [--reps N] [--so PATH] [--tool PATH] [--dir DIR | --out FILE]
       (after: bazel build //recorder:ljm/recorder.so //recorder:ljm_record)

Each workload runs under stock /usr/bin/luajit with the JIT off: plain,
recorded through require "ljm.recorder" (rec: the standard stream), and
recorded with start(path, {stacks = true}) (stacks: the extended stream
with call stacks, time marks and RSS samples) (streams to a file in DIR, by
default /dev/shm: a tmpfs, so that the disk's write-back speed is not
what gets measured; --dir /tmp shows the disk-bound case, --out /dev/null
the recorder without any file I/O),
alternating, N times each; the ratio of the best (minimum) wall times is
the overhead (targets: <= 1.5x standard, <= 1.6x with stacks for
binary-trees); the minimum is the estimator that other
processes on a shared machine disturb least. Also printed: the CPU time of the program's
own thread (what the wall time becomes when a core is free for the
writer thread) and of the whole process (including the writer thread's
copy of the stream into the kernel: what the wall time becomes when no
core is free).
Then the stream writer: write() calls and bytes per call for one
recorded run (strace), and the time to record big.lua (the reference's
own time for it: bench/RESULTS.md, "Recorder cost"), with and
without --stacks, and the size of its whole-run stream both ways
(target: the extended stream <= 1.3x the standard one).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WORKLOADS = [("binary-trees", "binary_trees.lua", "15"),
             ("string building", "string_build.lua", "200000"),
             ("table churn", "table_churn.lua", "300000")]


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def main():
    reps = int(arg("--reps", "7"))
    so = arg("--so", os.path.join(ROOT, "bazel-bin", "recorder", "ljm", "recorder.so"))
    tool = os.path.abspath(arg("--tool", os.path.join(ROOT, "bazel-bin", "recorder", "ljm_record")))
    if not os.path.exists(so):
        sys.exit("run_bench: %s not found; bazel build //recorder:ljm/recorder.so first" % so)
    tmp = tempfile.mkdtemp(prefix="ljm-bench-")
    os.makedirs(os.path.join(tmp, "ljm"))
    shutil.copy(so, os.path.join(tmp, "ljm", "recorder.so"))
    env = dict(os.environ, LUA_CPATH=os.path.join(tmp, "?.so") + ";;")
    outdir = arg("--dir", "/dev/shm" if os.path.isdir("/dev/shm") else tmp)
    out = arg("--out", os.path.join(outdir, "ljm-bench-%d.ljm" % os.getpid()))
    print("stream written to %s; %d runs each, best of them" % (out, reps))
    import ljmread  # the tests' stream reader: PYTHONPATH=tests/lib
    driver = os.path.join(HERE, "driver.lua")
    modes = ("off", "rec", "stacks")
    worst = {"rec": 0.0, "stacks": 0.0}
    fmt = "%-15s %-6s %7s %6s | %7s %6s | %7s %6s | %7s %7s"
    print(fmt % ("workload", "mode", "wall", "ratio", "thread", "ratio", "process", "ratio",
                 "stream", "events"))
    print(fmt % ("", "", "s", "", "s", "", "s", "", "MB", "M/s"))
    for label, script, size in WORKLOADS:
        path = os.path.join(HERE, script)
        m = {mode: ([], [], []) for mode in modes}
        sizes, events = {}, float("nan")
        for _ in range(reps):
            for mode in modes:
                p = subprocess.run(["luajit", driver, mode, path, size, out], env=env,
                                   capture_output=True, text=True, check=True)
                for acc, v in zip(m[mode], p.stdout.split()):
                    acc.append(float(v))
                if mode != "off" and os.path.isfile(out):
                    sizes[mode] = os.path.getsize(out)
                    if mode == "rec" and events != events:  # count once
                        events = ljmread.decode(open(out, "rb").read())[1]["events"]
        mp, cp, tp = (min(x) for x in m["off"])
        for mode in modes:
            mr, cr, tr = (min(x) for x in m[mode])
            if mode == "off":
                print("%-15s %-6s %7.3f %6s | %7.3f %6s | %7.3f %6s |" % (
                    label, mode, mr, "", tr, "", cr, ""))
                continue
            worst[mode] = max(worst[mode], mr / mp)
            print("%-15s %-6s %7.3f %5.2fx | %7.3f %5.2fx | %7.3f %5.2fx | %7.1f %7.2f" % (
                label, mode, mr, mr / mp, tr, tr / tp, cr, cr / cp,
                sizes.get(mode, float("nan")) / 1e6, events / mr / 1e6))
    print("worst wall-time ratio: standard %.2fx (target <= 1.50x), stacks %.2fx; "
          "load average %s" % (worst["rec"], worst["stacks"],
                               " ".join(open("/proc/loadavg").read().split()[:3])))

    # Writer: one write() per 8 MiB buffer.
    if shutil.which("strace") and os.path.isfile(out):
        path = os.path.join(HERE, "binary_trees.lua")
        log = os.path.join(tmp, "strace.log")
        subprocess.run(["strace", "-f", "-e", "trace=write", "-o", log, "luajit", driver,
                        "rec", path, "15", out], env=env, capture_output=True, check=True)
        sizes = []
        for line in open(log):
            if "write(" in line and "= " in line:
                try:
                    fd = int(line.split("write(")[1].split(",")[0])
                    n = int(line.rsplit("= ", 1)[1].split()[0])
                except ValueError:
                    continue
                if fd > 2:
                    sizes.append(n)
        total = os.path.getsize(out)
        print("writer: %d write() calls for %d bytes (%s)" % (
            len(sizes), total, ", ".join(str(s) for s in sizes)))
    if os.path.exists(tool):
        big = os.path.join(ROOT, "testdata", "v3", "big.lua")
        whole = {}
        for opts in ([], ["--stacks"]):
            cwd = tempfile.mkdtemp(dir=tmp)
            best = None
            for _ in range(3):
                t0 = time.time()
                subprocess.run([tool] + opts + ["-o", os.path.join(cwd, "whole.ljm"), big],
                               cwd=cwd, check=True, capture_output=True)
                dt = time.time() - t0
                best = dt if best is None else min(best, dt)
            mb = os.path.getsize(os.path.join(cwd, "big.ljm")) / 1e6
            whole[bool(opts)] = os.path.getsize(os.path.join(cwd, "whole.ljm"))
            print("big.lua under ljm record%s: %.2f s wall for the whole run (best of 3), "
                  "its misc.memprof profile %.1f MB, the whole-run stream %.1f MB%s" % (
                      " --stacks" if opts else "", best, mb, whole[bool(opts)] / 1e6,
                      "" if opts else " (reference: 39.1 MB in 0.84 s)"))
        print("big.lua whole-run stream with --stacks: %.3fx the standard stream "
              "(target <= 1.30x)" % (whole[True] / whole[False]))
    if os.path.isfile(out) and "--out" not in sys.argv:
        os.unlink(out)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
