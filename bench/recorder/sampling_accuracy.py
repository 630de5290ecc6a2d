#!/usr/bin/env python3
"""sampling_accuracy.py -- how close sampled recording comes (target: 15%).

usage: python3 bench/recorder/sampling_accuracy.py [--rate 128k] [--seeds 1,2,3]
       (after: bazel build //cli:ljm //recorder:ljm_record)

Records sampling_accuracy.lua (deterministic, JIT off, about 1 GB allocated)
exactly and sampled at RATE with each seed, with and without --stacks, and
prints for every line that holds at least 4% of the allocated bytes the
relative error of its estimate in the report (ljm convert -f json: the
sites the text report prints) and in the graph views: the folded stacks
(every flame graph: SVG, speedscope take the same tree) and pprof (go tool
pprof -top, per line). Target: every such line within 15%.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LJM = os.path.join(ROOT, "bazel-bin", "cli", "ljm")
REC = os.path.join(ROOT, "bazel-bin", "recorder", "ljm_record")
PROG = os.path.join(HERE, "sampling_accuracy.lua")


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def line_of(name):
    m = re.search(r"sampling_accuracy\.lua:(\d+)", name)
    return int(m.group(1)) if m else None


def report_lines(path):
    out = path + ".json"
    subprocess.run([LJM, "convert", "-o", out, path], check=True)
    with open(out) as f:
        doc = json.load(f)
    by = {}
    for s in doc["sites"]:
        ln = line_of(s["name"]) if s["kind"] == "lua" else None
        if ln:
            by[ln] = by.get(ln, 0) + s["alloc_bytes"]
    return by


def folded_lines(path):
    """Bytes per innermost Lua line of the folded stacks."""
    out = path + ".folded"
    subprocess.run([LJM, "convert", "-o", out, path], check=True)
    by = {}
    with open(out) as f:
        for ln in f:
            stack, v = ln.rstrip("\n").rsplit(" ", 1)
            lines = [line_of(fr) for fr in stack.split(";") if line_of(fr)]
            if lines:
                by[lines[-1]] = by.get(lines[-1], 0) + int(v)
    return by


def pprof_lines(path, env):
    out = path + ".pb.gz"
    subprocess.run([LJM, "convert", "-o", out, path], check=True)
    p = subprocess.run(["go", "tool", "pprof", "-top", "-lines", "-unit=B", "-nodecount=1000", out],
                       capture_output=True, text=True, env=env)
    by = {}
    for ln in p.stdout.splitlines():
        m = re.match(r"\s*(\d+)B\s+\S+%\s+\S+%\s+\S+\s+\S+%\s+(.*)$", ln)
        if m and line_of(m.group(2)):
            k = line_of(m.group(2))
            by[k] = by.get(k, 0) + int(m.group(1))
    return by


def main():
    rate = arg("--rate", "128k")
    seeds = [int(s) for s in arg("--seeds", "1,2,3").split(",")]
    tmp = tempfile.mkdtemp(prefix="ljm-accuracy-")
    genv = dict(os.environ, HOME=tmp, GOCACHE=os.path.join(tmp, "gocache"), GOTELEMETRY="off")
    worst_all = 0.0
    for stacks in ([], ["--stacks"]):
        exact = os.path.join(tmp, "exact.ljm")
        subprocess.run([REC] + stacks + ["-o", exact, PROG], check=True)
        views = {"report": report_lines, "folded": folded_lines,
                 "pprof": lambda p: pprof_lines(p, genv)}
        ex = {v: f(exact) for v, f in views.items()}
        total = sum(ex["report"].values())
        big = sorted(k for k, b in ex["report"].items() if b >= 0.04 * total)
        print("%s: %.0f MB allocated, exact stream %.1f MB; lines with >= 4%%: %s"
              % ("with stacks" if stacks else "no stacks", total / 1e6,
                 os.path.getsize(exact) / 1e6, big))
        for seed in seeds:
            path = os.path.join(tmp, "s.ljm")
            subprocess.run([REC] + stacks + ["--sample", rate, "--sample-seed", str(seed), "-o", path,
                                              PROG], check=True)
            row = []
            for v, f in views.items():
                got = f(path)
                errs = [(got.get(k, 0) - ex[v].get(k, 0)) / ex[v][k] for k in big if ex[v].get(k)]
                worst = max(abs(e) for e in errs)
                worst_all = max(worst_all, worst)
                row.append("%s worst %5.1f%% (%s)" % (v, 100 * worst,
                                                       " ".join("%+.1f" % (100 * e) for e in errs)))
            print("  seed %d, stream %.2f MB: %s" % (seed, os.path.getsize(path) / 1e6, "; ".join(row)))
    print("rate %s: worst line error %.1f%% (target <= 15%%)" % (rate, 100 * worst_all))


main()
