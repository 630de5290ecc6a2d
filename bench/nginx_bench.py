#!/usr/bin/env python3
"""nginx_bench.py -- what recording costs a real nginx (Debian nginx-light +
libnginx-mod-http-lua, OpenResty's luajit2, JIT on) serving the OpenResty
example's /leak handler under wrk: requests/s without recording and with
each worker recording (examples/openresty/always.conf) to .ljm, .ljm.gz,
.ljm.zst, with call stacks to .ljm.gz, and sampled (512k, stacks); the
stream bytes per request, the workers' CPU time per request (every thread,
from schedstat) and the share of it their other threads (the recorder's)
took. Prints figures, no pass/fail.

  PYTHONPATH=tests python3 bench/nginx_bench.py [SECONDS [ROUNDS]] [--modes none,sampled,...]
                               [--so-b OTHER/recorder.so] [--fresh] [--path /api]

--path: the location wrk asks for (default /leak; /api: the gateway of
three plugins, each request under five labels: phase, location and each
plugin's, set and restored by with_labels four times).

Modes: none ljm gz zst stacks sampled sampled-flat (without stacks)
none-b (a second unrecorded server: the bench's own error), loaded (the
module loaded and the example's 0.5 s timer running, nothing recorded),
pass (no recorder: bench/recorder/passthrough.c's bare lua_setallocf
wrapper, the floor of any allocator wrapper), thread (no recorder: one
idle thread in each worker, what not being single-threaded costs) (default:
all but none-b, loaded, pass and thread). --so-b adds the mode
"sampled B": the sampled mode with another build of the recorder (an A/B of
two builds in the same sitting). One nginx per mode runs throughout. In
each of ROUNDS rounds (default 20), every recorded mode gets a burst of
SECONDS (default 2) under wrk right before or after (alternately) a burst
of the unrecorded server, starting with another mode each round. The
ratios are the medians (and quartiles) of each burst's figure over its
unrecorded neighbour's: a VM's speed drifts within seconds, so only
neighbouring bursts compare. --fresh restarts every server before
each round: two servers of the same mode differ by a few percent (their
processes' layouts), which otherwise biases a whole sitting. CPU per request counts only the
workers (their writer threads included).

Builds //recorder:ljm/recorder.so and //bench:ljm_bench_pass.so with -c
opt. Run on a quiet machine: wrk and nginx's two workers share the cores."""
import argparse
import os
import re
import shutil
import statistics
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# tests/nginxlib.py, shared with nginx_test (PYTHONPATH=tests)
from nginxlib import SAMPLED, Nginx, bench_prefix, opt_libs, scratch_top, served, wrk

ap = argparse.ArgumentParser(description="nginx requests/s with and without recording")
ap.add_argument("seconds", nargs="?", type=int, default=2, help="one burst (default 2)")
ap.add_argument("rounds", nargs="?", type=int, default=20, help="rounds (default 20)")
ap.add_argument("--modes", default="none,ljm,gz,zst,stacks,sampled,sampled-flat")
ap.add_argument("--so-b", help="another recorder.so for the mode 'sampled B'")
ap.add_argument("--path", default="/leak", help="the location wrk asks for (default /leak)")
ap.add_argument("--fresh", action="store_true",
                help="restart every server before each round (new processes, layouts)")
args = ap.parse_args()

so, pass_so = opt_libs(root)
example = os.path.join(root, "examples", "openresty")

# key: (label, what init_worker_by_lua_block runs instead of ALWAYS, recorder.so)
ALL = {
    "none": ("not recorded", "-- not recorded", so),
    "ljm": ("recorded .ljm", 'require("ljm_nginx").always{ flush = 1, suffix = ".ljm" }', so),
    "gz": ("recorded .ljm.gz", 'require("ljm_nginx").always{ flush = 1, suffix = ".ljm.gz" }', so),
    "zst": ("recorded .ljm.zst", 'require("ljm_nginx").always{ flush = 1, suffix = ".ljm.zst" }', so),
    "stacks": ("stacks .ljm.gz",
               'require("ljm_nginx").always{ flush = 1, suffix = ".ljm.gz", stacks = true }', so),
    "sampled": ("sampled 512k stacks", SAMPLED, so),
    "sampled-flat": ("sampled 512k", SAMPLED.replace(" stacks = true,", ""), so),
    "none-b": ("not recorded B", "-- not recorded", so),
    "loaded": ("module, no recording", 'require("ljm.recorder") '
               'ngx.timer.every(0.5, function() end)', so),
    "pass": ("bare pass-through", 'require("ljm_bench_pass").on()', so),
    "thread": ("an idle thread", 'require("ljm_bench_pass").thread()', so),
}
keys = list(dict.fromkeys(k for k in args.modes.split(",") if k))
for k in keys:
    if k not in ALL:
        sys.exit("unknown mode %r (modes: %s)" % (k, " ".join(ALL)))
if "none" in keys:
    keys.remove("none")
MODES = [ALL["none"]] + [ALL[k] for k in keys]
if args.so_b:
    MODES.append(("sampled B", SAMPLED, os.path.abspath(args.so_b)))


def cpu_seconds(pids):
    """CPU time of the processes so far, in seconds (schedstat: ns, every
    thread): all of it, and that of the threads besides the main one (the
    recorder's writer and ticker)."""
    total = other = 0
    for pid in pids:
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                    ns = int(f.read().split()[0])
            except OSError:  # the thread ended meanwhile
                continue
            total += ns
            if int(tid) != pid:
                other += ns
    return total / 1e9, other / 1e9


def burst(server):
    """requests/s, the workers' CPU seconds per request and the share of
    their CPU time their other threads took, of one burst."""
    label, prefix, port, ngx, workers = server
    before = cpu_seconds(workers)
    p, nreq = wrk(port, args.path, args.seconds)
    after = cpu_seconds(workers)
    used, extra = after[0] - before[0], after[1] - before[1]
    m = re.search(r"Requests/sec:\s*([\d.]+)", p.stdout)
    if not m or not nreq or used <= 0:
        raise RuntimeError("wrk against %s: %s" % (label, (p.stdout + p.stderr)[-300:]))
    return float(m.group(1)), used / nreq, extra / used


top = scratch_top()
servers = []  # (label, prefix, port, nginx, workers)
rate = {}     # label -> [requests/s per burst]
cpu = {}      # label -> [worker CPU seconds per request, per burst]
threads = {}  # label -> [share of the workers' CPU in their other threads]
pairs = {}    # label -> [(its burst, the unrecorded burst next to it)]
per_req = {}


def start(i):
    """(Re)starts server i, whose prefix is made on its first start."""
    label, prefix, port, ngx, _ = servers[i]
    if ngx:
        ngx.quit()
    servers[i] = (label, prefix, port, Nginx(prefix, "always.conf"), [])
    if not servers[i][3].wait_ready(port):
        raise RuntimeError("nginx did not start: %s" % prefix)
    servers[i] = servers[i][:4] + (servers[i][3].workers(),)


try:
    for label, init, lib in MODES:
        prefix, port = bench_prefix(top, re.sub(r"\W", "", label), example, lib, pass_so, init)
        servers.append((label, prefix, port, None, []))
        start(len(servers) - 1)
    for rnd in range(args.rounds):
        # --fresh: a server's processes (their address layout, the heap the
        # /leak handler keeps) differ from the next one's by a few percent
        # in speed; new ones each round turn that bias into noise.
        if args.fresh and rnd:
            for i in range(len(servers)):
                start(i)
        base, others = servers[0], servers[1:]
        # Every server is up (the idle ones cost nothing). Each recorded
        # burst is paired with an unrecorded one right before or after it
        # (alternately), and each round starts with another mode, so that
        # the machine's drift and a first burst's warm-up hit all alike.
        k = rnd % len(others)
        for i, server in enumerate(others[k:] + others[:k]):
            first, second = (base, server) if (rnd + i) % 2 == 0 else (server, base)
            got = {first[0]: burst(first)}
            got[second[0]] = burst(second)
            for label, fig in got.items():
                rate.setdefault(label, []).append(fig[0])
                cpu.setdefault(label, []).append(fig[1])
                threads.setdefault(label, []).append(fig[2])
            pairs.setdefault(server[0], []).append((got[server[0]], got[base[0]]))
finally:
    for label, prefix, port, ngx, workers in servers:
        if ngx:
            ngx.quit()
        try:
            size = sum(os.path.getsize(prefix + "ljm/" + f) for f in os.listdir(prefix + "ljm"))
            n = served(prefix, args.path)
        except OSError:
            size = n = 0
        per_req[label] = size / n if n else 0
    shutil.rmtree(top)


def quartiles(xs):
    q = statistics.quantiles(xs, n=4, method="inclusive") if len(xs) > 1 else [xs[0]] * 3
    return q[0], q[1], q[2]


base = ALL["none"][0]
print("nginx %s, 2 workers, wrk -t2 -c16: %d rounds, in each a %d s burst per recorded mode"
      " next to an unrecorded one" % (args.path, args.rounds, args.seconds))
print("requests/s and CPU: medians over the bursts; ratios: medians (quartiles) of each"
      " burst's figure over the unrecorded burst next to it")
print("%-20s %11s %-22s %10s %-22s %8s %9s" % ("mode", "requests/s", "  ratio", "CPU us/req",
                                               "  ratio", "threads", "bytes/req"))
for label, _, _ in MODES:
    if label == base:
        rq = cq = (1.0, 1.0, 1.0)
    else:
        rq = quartiles([a[0] / b[0] for a, b in pairs[label]])
        cq = quartiles([a[1] / b[1] for a, b in pairs[label]])
    print("%-20s %11.0f   %.3f (%.3f..%.3f) %10.2f   %.3f (%.3f..%.3f) %7.2f%% %9.1f"
          % (label, statistics.median(rate[label]), rq[1], rq[0], rq[2],
             statistics.median(cpu[label]) * 1e6, cq[1], cq[0], cq[2],
             statistics.median(threads[label]) * 100, per_req[label]))
print("threads: the median share of the workers' CPU time spent in their other threads"
      " (the recorder's writer and, for exact recordings with stacks, ticker)")
