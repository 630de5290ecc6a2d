#!/usr/bin/env python3
"""exact_cost.py -- what exact recording costs a program, against plain luajit.

usage: PYTHONPATH=tests/lib python3 bench/recorder/exact_cost.py [--pairs N] [--tool LJM] [--tool-b LJM]
           [--so SO] [--so-b SO] [--workloads bt,luacheck] [--modes standard,stacks]
           [--instructions] [--dir DIR]
       (after: bazel build -c opt //cli:ljm //recorder:ljm/recorder.so)

1. Whole processes, paired. Each round runs, in a shuffled order, the
   workload under plain `luajit` and under `ljm record` in each mode
   (standard: the ljm stream; stacks: --stacks), stream to DIR (default
   /dev/shm, so that no disk is measured). Printed per mode: the median
   of the rounds' ratios to the plain run of the same round, wall and CPU
   (user + system of the whole process, the writer thread included), with
   quartiles. --tool-b adds a second ljm binary (an A/B of two builds):
   its rounds' ratios, and the pairs' ratios of B to A.
   Workloads: bt (binary_trees.lua 15, -joff) and luacheck (Debian's
   luacheck linting every file under /usr/share/lua/5.1, JIT on).
2. --instructions: instructions per allocator call (valgrind, which counts
   the same for the same binary, input and environment): the module
   recording binary-trees 12 with the JIT off (bench/recorder/driver.lua)
   in each mode, minus the plain run's, over the number of events; of the
   whole process (cachegrind), and outside the VM's own code (callgrind:
   the recorder's memory moves LuaJIT's arena and with it the work of the
   VM's allocator, tests/lib/valgrind_count.py). --so-b adds a second
   recorder.so. Then ljm record (--tool, --tool-b) on luacheck in each
   mode, whole processes, over plain luajit's, per allocator call.
"""
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LUACHECK_RUN = os.path.join(ROOT, "testdata", "real", "luacheck_run.lua")
WORKLOADS = {
    "bt": ("binary-trees 15, JIT off", ["-joff", os.path.join(HERE, "binary_trees.lua"), "15"]),
    "luacheck": ("luacheck over /usr/share/lua/5.1", [LUACHECK_RUN, "/usr/share/lua/5.1"]),
}
MODES = {"standard": [], "stacks": ["--stacks"], "sampled": ["--sample", "512k", "--stacks"]}


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def run(cmd):
    """Wall and CPU seconds of one process (its output discarded)."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if status:
        sys.exit("exact_cost: %s exited with status %d" % (" ".join(cmd), status))
    return wall, ru.ru_utime + ru.ru_stime


def quart(xs):
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    return "%.3fx (quartiles %.3fx .. %.3fx)" % (q[1], q[0], q[2])


def whole_runs(work, modes, tools, pairs, out):
    label, args = WORKLOADS[work]
    runs = [("plain", ["luajit"] + args)]
    for tname, tool in tools:
        for m in modes:
            runs.append(("%s%s" % (m, tname), [tool, "record"] + MODES[m] + ["-o", out] + args))
    got = {name: [] for name, _ in runs}
    run(runs[0][1])  # warm the page cache
    for _ in range(pairs):
        order = runs[:]
        random.shuffle(order)
        for name, cmd in order:
            got[name].append(run(cmd))
    print("1. %s: %d rounds, each mode's ratio to the plain run of its round" % (label, pairs))
    plain = got["plain"]
    print("  %-12s wall median %.3f s   CPU median %.3f s"
          % ("luajit", statistics.median(w for w, _ in plain), statistics.median(c for _, c in plain)))
    for name, _ in runs[1:]:
        xs = got[name]
        print("  %-12s wall %s   CPU %s" % (
            name, quart([a[0] / b[0] for a, b in zip(xs, plain)]),
            quart([a[1] / b[1] for a, b in zip(xs, plain)])))
    if len(tools) > 1:
        for m in modes:
            a, b = got[m], got[m + tools[1][0]]
            print("  %-12s B / A: wall %s   CPU %s" % (
                m, quart([y[0] / x[0] for x, y in zip(a, b)]),
                quart([y[1] / x[1] for x, y in zip(a, b)])))


def events(path):
    import ljmread  # the tests' stream reader: PYTHONPATH=tests/lib
    _, evs = ljmread.parse_strict(open(path, "rb").read())
    return len(evs)


def instructions(sos, out):
    import valgrind_count  # the tests' library: PYTHONPATH=tests/lib
    if not shutil.which("valgrind"):
        sys.exit("exact_cost: --instructions needs valgrind")
    driver = os.path.join(HERE, "driver.lua")
    work = os.path.join(HERE, "binary_trees.lua")
    print("2. instructions per allocator call: the module recording binary_trees.lua 12, JIT off;"
          " whole process / outside the VM")
    for sname, so in sos:
        tmp = tempfile.mkdtemp(prefix="ljm-cost-", dir="/tmp")
        os.makedirs(os.path.join(tmp, "ljm"))
        shutil.copy(so, os.path.join(tmp, "ljm", "recorder.so"))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C",
               "LUA_CPATH": os.path.join(tmp, "?.so") + ";;", "LJM_BENCH_SEED": "7"}
        cg = os.path.join(tmp, "callgrind.out")
        cmd = ["luajit", driver, "off", work, "12"]
        base = valgrind_count.instructions(cmd, env), valgrind_count.beside_vm(cmd, cg, env)
        calls = None
        for mode in ("rec", "stacks", "sampled"):
            cmd = ["luajit", driver, mode, work, "12", out]
            n = valgrind_count.instructions(cmd, env), valgrind_count.beside_vm(cmd, cg, env)
            if mode == "rec":
                calls = events(out)
            print("  %-3s %-8s %13s instructions: %7.1f a call / %7.1f outside the VM (%d calls)"
                  % (sname, {"rec": "standard"}.get(mode, mode), format(n[0], ","),
                     (n[0] - base[0]) / calls, (n[1] - base[1]) / calls, calls))
        shutil.rmtree(tmp)


def luacheck_instructions(tools, out):
    """Instructions per allocator call of ljm record on luacheck, whole processes."""
    import valgrind_count  # the tests' library: PYTHONPATH=tests/lib
    args = WORKLOADS["luacheck"][1]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C"}
    base = valgrind_count.instructions(["luajit"] + args, env)
    print("3. instructions per allocator call: ljm record on luacheck over /usr/share/lua/5.1,"
          " whole process, over luajit's %s" % format(base, ","))
    for tname, tool in tools:
        calls = None
        for mode in ("standard", "stacks", "sampled"):
            n = valgrind_count.instructions([tool, "record"] + MODES[mode] + ["-o", out] + args, env)
            if mode == "standard":
                calls = events(out)
            print("  %-3s %-8s %14s instructions, %7.1f a call (%d calls)"
                  % ("B" if tname else "A", mode, format(n, ","), (n - base) / calls, calls))


def main():
    pairs = int(arg("--pairs", "11"))
    tool = os.path.abspath(arg("--tool", os.path.join(ROOT, "bazel-bin", "cli", "ljm")))
    tools = [("", tool)]
    if "--tool-b" in sys.argv:
        tools.append(("-B", os.path.abspath(arg("--tool-b", ""))))
    outdir = arg("--dir", "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir())
    out = os.path.join(outdir, "ljm-exact-%d.ljm" % os.getpid())
    modes = arg("--modes", "standard,stacks").split(",")
    try:
        if "--instructions" in sys.argv:
            so = arg("--so", os.path.join(ROOT, "bazel-bin", "recorder", "ljm", "recorder.so"))
            sos = [("A", so)] + ([("B", arg("--so-b", ""))] if "--so-b" in sys.argv else [])
            instructions(sos, out)
            luacheck_instructions(tools, out)
            return
        for work in arg("--workloads", "bt,luacheck").split(","):
            whole_runs(work, modes, tools, pairs, out)
    finally:
        if os.path.exists(out):
            os.unlink(out)


if __name__ == "__main__":
    main()
