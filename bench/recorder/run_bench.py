#!/usr/bin/env python3
"""run_bench.py -- overhead of the recorder on allocation-heavy workloads.

usage: python3 bench/recorder/run_bench.py [--reps N] [--so PATH] [--dir DIR | --out FILE]
       (after: bazel build //recorder:ljm/recorder.so //recorder:ljm_record)

Each workload runs under stock /usr/bin/luajit with the JIT off, plain and
recorded through require "ljm.recorder" (stream to a file in DIR, by
default /dev/shm: a tmpfs, so that the disk's write-back speed is not
what gets measured; --dir /tmp shows the disk-bound case, --out /dev/null
the recorder without any file I/O),
alternating, N times each; the ratio of the best (minimum) wall times is
the overhead (target: <= 1.5x); the minimum is the estimator that other
processes on a shared machine disturb least. Also printed: the CPU time of the program's
own thread (what the wall time becomes when a core is free for the
writer thread) and of the whole process (including the writer thread's
copy of the stream into the kernel: what the wall time becomes when no
core is free).
Then the stream writer: write() calls and bytes per call for one
recorded run (strace), and the time to record big.lua (the reference's
39 MB profile took 0.84 s to generate with its 8 MiB writer).
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
    tool = os.path.join(ROOT, "bazel-bin", "recorder", "ljm_record")
    if not os.path.exists(so):
        sys.exit("run_bench: %s not found; bazel build //recorder:ljm/recorder.so first" % so)
    tmp = tempfile.mkdtemp(prefix="ljm-bench-")
    os.makedirs(os.path.join(tmp, "ljm"))
    shutil.copy(so, os.path.join(tmp, "ljm", "recorder.so"))
    env = dict(os.environ, LUA_CPATH=os.path.join(tmp, "?.so") + ";;")
    outdir = arg("--dir", "/dev/shm" if os.path.isdir("/dev/shm") else tmp)
    out = arg("--out", os.path.join(outdir, "ljm-bench-%d.ljm" % os.getpid()))
    print("stream written to %s; %d runs each, best of them" % (out, reps))
    driver = os.path.join(HERE, "driver.lua")
    worst = 0.0
    print("%-15s %7s %7s %6s | %7s %7s %6s | %7s %7s %6s | %7s %7s" % (
        "workload", "wall", "wall", "", "thread", "thread", "", "process", "process", "",
        "stream", "events"))
    print("%-15s %7s %7s %6s | %7s %7s %6s | %7s %7s %6s | %7s %7s" % (
        "", "plain", "rec", "ratio", "plain", "rec", "ratio", "plain", "rec", "ratio",
        "MB", "M/s"))
    for label, script, size in WORKLOADS:
        path = os.path.join(HERE, script)
        m = {"off": ([], [], []), "rec": ([], [], [])}
        for _ in range(reps):
            for mode in ("off", "rec"):
                p = subprocess.run(["luajit", driver, mode, path, size, out], env=env,
                                   capture_output=True, text=True, check=True)
                for acc, v in zip(m[mode], p.stdout.split()):
                    acc.append(float(v))
        mp, cp, tp = (min(x) for x in m["off"])
        mr, cr, tr = (min(x) for x in m["rec"])
        if os.path.isfile(out):
            size_mb = os.path.getsize(out) / 1e6
            sys.path.insert(0, os.path.join(ROOT, "recorder", "tests"))
            import ljmrows
            _, info = ljmrows.decode(open(out, "rb").read())
        else:  # /dev/null
            size_mb, info = float("nan"), {"events": float("nan")}
        ratio = mr / mp
        worst = max(worst, ratio)
        print("%-15s %7.3f %7.3f %5.2fx | %7.3f %7.3f %5.2fx | %7.3f %7.3f %5.2fx | %7.1f %7.2f" % (
            label, mp, mr, ratio, tp, tr, tr / tp, cp, cr, cr / cp, size_mb,
            info["events"] / mr / 1e6))
    print("worst wall-time ratio %.2fx (target <= 1.50x); load average %s" % (
        worst, " ".join(open("/proc/loadavg").read().split()[:3])))

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
        cwd = tempfile.mkdtemp(dir=tmp)
        t0 = time.time()
        subprocess.run([tool, "-o", os.path.join(cwd, "whole.ljm"), big], cwd=cwd, check=True,
                       capture_output=True)
        dt = time.time() - t0
        mb = os.path.getsize(os.path.join(cwd, "big.ljm")) / 1e6
        print("big.lua under ljm record: %.2f s wall for the whole run, its profile %.1f MB "
              "(reference: 39.1 MB in 0.84 s)" % (dt, mb))
    if os.path.isfile(out) and "--out" not in sys.argv:
        os.unlink(out)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
