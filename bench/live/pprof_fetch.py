#!/usr/bin/env python3
"""pprof_fetch.py -- what serving /debug/pprof/heap costs a busy nginx.

One nginx with the OpenResty example's pprof.conf as shipped (two workers,
each recording sampled with stacks, one allocated byte in 512 KiB; the
endpoint's conversions in the thread pool at nice 10) serves PATH under
wrk (2 threads, 16 connections, --latency). In each of ROUNDS rounds it
gets two bursts of SECONDS, in turns first or second: one with a client
fetching /debug/pprof/heap every second (the whole profile, both workers'
streams merged), one without. Prints per burst requests/s, wrk's latency
(99th percentile and maximum: the worst request while profiles were made),
the fetches' times, the CPU time of each fetch's conversion (the workers'
waited-for children), and the median ratio of requests/s with fetches over
its neighbour without (on a loaded 2-core machine a burst's requests/s
wander by several percent: the CPU share is the steadier figure).

usage: PYTHONPATH=tests bench/live/pprof_fetch.py [SECONDS [ROUNDS]] [--path /leak] [--nice N]
(/api keeps 2 KB a request: its workers grow by GBs within a minute, and
the machine's memory, not the fetches, decides its figures.)
Builds //cli:ljm and //recorder:ljm/recorder.so with -c opt."""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from nginxlib import Nginx, make_prefix, opt_libs, scratch_top  # noqa: E402

ap = argparse.ArgumentParser(description="nginx under wrk with and without /debug/pprof/heap fetches")
ap.add_argument("seconds", nargs="?", type=int, default=5)
ap.add_argument("rounds", nargs="?", type=int, default=6)
ap.add_argument("--path", default="/leak")
ap.add_argument("--nice", type=int, default=None, help="the conversions' nice (default: the example's)")
args = ap.parse_args()

so, _ = opt_libs(root)
subprocess.run(["bazel", "build", "-c", "opt", "--symlink_prefix=/", "//cli:ljm"], cwd=root,
               check=True, capture_output=True)
binp = subprocess.run(["bazel", "info", "-c", "opt", "bazel-bin"], cwd=root, check=True,
                      capture_output=True, text=True).stdout.strip()
top = scratch_top()
ljm = os.path.join(top, "ljm")
shutil.copy(os.path.join(binp, "cli", "ljm"), ljm)
os.chmod(ljm, 0o755)
prefix, (port, ctl) = make_prefix(top, "pprof", os.path.join(root, "examples", "openresty"), so)
conf = open(prefix + "pprof.conf").read().replace(
    'ljm = "ljm"', 'ljm = "%s"' % ljm + (", nice = %d" % args.nice if args.nice is not None else ""))
open(prefix + "pprof.conf", "w").write(conf)
ng = Nginx(prefix, "pprof.conf")
if not ng.wait_ready(port):
    sys.exit("nginx did not start")


def to_ms(v, unit):
    return float(v) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]


def burst(fetching):
    """wrk for SECONDS: (requests/s, p99 ms, max ms, fetch times in s)."""
    stop, times = threading.Event(), []

    def fetcher():
        while not stop.is_set():
            t0 = time.time()
            with urllib.request.urlopen("http://127.0.0.1:%d/debug/pprof/heap" % ctl, timeout=60) as r:
                body = r.read()
            if r.status != 200 or body[:2] != b"\x1f\x8b":
                raise SystemExit("fetch failed: %s" % r.status)
            times.append((time.time() - t0, len(body)))
            stop.wait(max(0.0, 1.0 - (time.time() - t0)))

    th = threading.Thread(target=fetcher) if fetching else None
    if th:
        th.start()
    p = subprocess.run(["wrk", "-t2", "-c16", "-d%ds" % args.seconds, "--latency",
                        "http://127.0.0.1:%d%s" % (port, args.path)],
                       capture_output=True, text=True, timeout=args.seconds + 120)
    stop.set()
    if th:
        th.join()
    rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", p.stdout).group(1))
    lat = re.search(r"Latency\s+\S+\s+\S+\s+([0-9.]+)(us|ms|s)", p.stdout)
    p99 = re.search(r"99%\s+([0-9.]+)(us|ms|s)", p.stdout)
    return rps, to_ms(*p99.groups()), to_ms(*lat.groups()), times


def children_cpu():
    """CPU seconds of the workers' waited-for children (the conversions:
    sh, ljm), from /proc/PID/stat (cutime + cstime)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in ng.workers():
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        total += int(f[13]) + int(f[14])
    return total / tick


burst(False)  # warm up: JIT, caches
cpu0 = children_cpu()
ratios, worst, p99s, fetches = [], [], {True: [], False: []}, []
for rnd in range(args.rounds):
    order = (True, False) if rnd % 2 == 0 else (False, True)
    got = {}
    for fetching in order:
        got[fetching] = burst(fetching)
    ratios.append(got[True][0] / got[False][0])
    for f in (True, False):
        p99s[f].append((got[f][1], got[f][2]))
    fetches += got[True][3]
    print("round %d: %8.0f req/s fetching (p99 %.2f ms, max %.2f ms, %d fetches), %8.0f without "
          "(p99 %.2f ms, max %.2f ms): %.3f" % (rnd + 1, got[True][0], got[True][1], got[True][2],
                                                len(got[True][3]), got[False][0], got[False][1],
                                                got[False][2], ratios[-1]))
cpu = children_cpu() - cpu0
ng.quit()
q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
print("requests/s fetching / without: median %.3f (quartiles %.3f .. %.3f) over %d rounds"
      % (statistics.median(ratios), q[0], q[2], len(ratios)))
for f in (True, False):
    print("%s: p99 latency median %.2f ms, worst request %.2f ms"
          % ("fetching" if f else "without ", statistics.median(x[0] for x in p99s[f]),
             max(x[1] for x in p99s[f])))
if fetches:
    secs = sorted(t for t, _ in fetches)
    print("fetches: %d, %.0f KB each (last), time median %.3f s, max %.3f s"
          % (len(fetches), fetches[-1][1] / 1e3, statistics.median(secs), secs[-1]))
    print("CPU per fetch (the conversion's processes): %.1f ms; at one fetch a second, %.2f%% of "
          "the machine's %d cores" % (cpu / len(fetches) * 1e3, cpu / len(fetches) * 100 /
                                      os.cpu_count(), os.cpu_count()))
