#!/usr/bin/env python3
"""nginx_instructions.py -- what recording costs nginx in user-space
instructions per request: exact and repeatable where requests per second
(nginx_bench.py) move by a few percent between sittings.

  PYTHONPATH=tests python3 bench/nginx_instructions.py [--modes none,sampled,...] [--requests N]
                                      [--path /leak|/work] [--so RECORDER.so]

One nginx process (master_process off, one worker's work) under valgrind's
callgrind serves the OpenResty example's /leak handler N/6 (default 1000)
and N (default 6000) requests in turn, on keep-alive connections; the
difference of the two runs' instruction totals over the difference of the
requests served is the instructions per request, without the start (the
recorder's own start reads the ELF symbols of every library once). Counts
the process's user space only (the kernel's share is not seen).

Modes: none (not recorded), sampled (the example's sample = "512k", stacks
= true), sampled-flat (without stacks), ljm (exact, .ljm), pass (the bare
lua_setallocf wrapper of bench/recorder/passthrough.c), thread (one idle
thread, no recorder). Default: none,sampled,thread (a mode may come twice: the
figure's own spread). Builds
//recorder:ljm/recorder.so and //bench:ljm_bench_pass.so with -c opt.
Prints figures, no pass/fail."""
import argparse
import http.client
import os
import re
import shutil
import subprocess
import sys
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# tests/nginxlib.py, shared with nginx_test (PYTHONPATH=tests)
from nginxlib import SAMPLED, bench_prefix, opt_libs, scratch_top

ap = argparse.ArgumentParser(description="nginx instructions per request, with and without recording")
ap.add_argument("--modes", default="none,sampled,thread")
ap.add_argument("--requests", type=int, default=6000)
ap.add_argument("--path", default="/leak", help="/leak (default) or /work (no growing heap)")
ap.add_argument("--so", help="another build's recorder.so (an A/B of two builds: run twice)")
args = ap.parse_args()

MODES = {
    "none": "-- not recorded",
    "sampled": SAMPLED,
    "sampled-flat": SAMPLED.replace(" stacks = true,", ""),
    "ljm": 'require("ljm_nginx").always{ flush = 1, suffix = ".ljm" }',
    "pass": 'require("ljm_bench_pass").on()',
    "thread": 'require("ljm_bench_pass").thread()',
}
modes = [m for m in args.modes.split(",") if m]
for m in modes:
    if m not in MODES:
        sys.exit("unknown mode %r (modes: %s)" % (m, " ".join(MODES)))
if not shutil.which("valgrind"):
    sys.exit("nginx_instructions: valgrind not found")

so, pass_so = opt_libs(root)
so = args.so or so
example = os.path.join(root, "examples", "openresty")


def log_tail(prefix):
    try:
        return open(prefix + "logs/error.log").read()[-500:]
    except OSError:
        return prefix


def serve(top, mode, n):
    """(requests served, instructions) of one process serving n requests."""
    name = "%s%d-%d" % (re.sub(r"\W", "", mode), n, len(os.listdir(top)))
    prefix, port = bench_prefix(top, name, example, so, pass_so, MODES[mode])
    conf = open(prefix + "always.conf").read()
    assert "worker_processes 2;" in conf
    conf = conf.replace("worker_processes 2;", "worker_processes 1;\nmaster_process off;\ndaemon off;")
    open(prefix + "always.conf", "w").write(conf)
    out = prefix + "callgrind.out"
    p = subprocess.Popen(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                          "nginx", "-p", prefix, "-c", "always.conf"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        c = None
        for _ in range(300):  # valgrind starts slowly
            if p.poll() is not None:
                break
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                c.connect()
                break
            except OSError:
                c = None
                time.sleep(0.2)
        if c is None:
            raise RuntimeError("nginx under valgrind did not start: %s" % log_tail(prefix))
        for _ in range(n):
            c.request("GET", args.path)
            r = c.getresponse()
            r.read()
            if r.status != 200:
                raise RuntimeError("GET %s: %d" % (args.path, r.status))
        c.close()
    finally:
        p.terminate()  # fast shutdown: callgrind writes its totals at exit
        try:
            p.wait(timeout=300)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    bad = [ln for ln in open(prefix + "logs/error.log") if re.search(r"\[(error|crit|alert|emerg)\]", ln)]
    if bad:
        raise RuntimeError("%s: %s" % (mode, bad[0].strip()))
    if mode in ("sampled", "sampled-flat", "ljm") and not os.listdir(prefix + "ljm"):
        raise RuntimeError("%s: no stream was written" % mode)
    served = sum(1 for line in open(prefix + "logs/access.log")
                 if '"GET %s HTTP/1.1" 200 ' % args.path in line)
    with open(out) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return served, int(line.split()[1])
    raise RuntimeError("no totals in %s" % out)


top = scratch_top()
try:
    print("nginx %s, one process under callgrind: %d and %d requests, user-space instructions"
          % (args.path, args.requests // 6, args.requests))
    print("%-14s %14s %14s %10s" % ("mode", "short run", "long run", "per request"))
    base = None
    for m in modes:
        (n1, i1), (n2, i2) = serve(top, m, args.requests // 6), serve(top, m, args.requests)
        if n2 <= n1:
            sys.exit("nginx_instructions: %s served %d and %d requests" % (m, n1, n2))
        per = (i2 - i1) / (n2 - n1)
        base = base or (per if m == "none" else None)
        print("%-14s %14d %14d %10.0f%s" % (m, i1, i2, per,
                                           "  %.3fx" % (per / base) if base and m != "none" else ""))
finally:
    shutil.rmtree(top)
