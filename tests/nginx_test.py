#!/usr/bin/env python3
"""nginx_test.py -- the OpenResty example (examples/openresty/) in a real
nginx (Debian nginx-light + libnginx-mod-http-lua, on OpenResty's luajit2,
JIT on) under wrk's load, on 127.0.0.1 with its own prefix:

* always.conf: one complete stream per worker, named after its pid; the
  leaking handler's line and its trace present, with counts consistent
  with the requests nginx served (its access log); the leak still live at
  stop; no failed request, nothing above [notice] in the error log.
* SIGKILL of a recording worker: its stream reports as truncated, with
  what was written up to the last flush (the example flushes every second);
  the respawned worker records a stream of its own.
* on-demand.conf: nothing recorded until /ljm/start on the loopback control
  server; every worker records then, and stops by the time limit alone.
* a full disk (a 64 KiB tmpfs): each worker logs "ljm: <path>: No space
  left on device" once, while it runs, and nothing more at exit.
* daemon on, a recording started in init_by_lua: the process that forks
  into the background keeps it (a complete stream at its exit), and a
  reload's init_by_lua in the daemon records again (no "another Lua
  state" refusal).

usage: nginx_test.py LJM RECORDER_SO EXAMPLE_FILES..."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zlib

from checks import Checks
import ljmread
from nginxlib import Nginx, get, log_problems, make_prefix, scratch_top, served, wrk

import testlib

ljm, so = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
example = os.path.dirname(os.path.abspath([f for f in sys.argv[3:] if f.endswith("always.conf")][0]))
check = Checks("nginx")
A = "ALLOCATIONS"
top = scratch_top()


def stream(path):
    """(rows, info) of a possibly cut .gz stream."""
    raw = open(path, "rb").read()
    return ljmread.decode(zlib.decompressobj(31).decompress(raw))


def leak_rows(rows, prefix):
    """Allocation events of the leaking line, interpreted and in traces
    that start in app.lua (JIT on: the handler runs as a trace)."""
    app = "@%slua/app.lua:" % prefix
    line = trace = 0
    for (sec, name), cs in rows.items():
        if sec != A:
            continue
        if name == app + "11":
            line += sum(cs)
        elif name.startswith("TRACE [") and (" started at " + app) in name:
            trace += sum(cs)
    return line, trace


# -- always.conf under load, graceful stop ---------------------------------
prefix, (port, ctl) = make_prefix(top, "always", example, so)
ngx = Nginx(prefix, "always.conf", testlib.module_env(so))
check(ngx.wait_ready(port), "nginx started with 2 workers")
workers = ngx.workers()
p, nreq = wrk(port, "/leak", 4)
check(p.returncode == 0 and nreq > 1000, "wrk ran: %d requests (%s)" % (nreq, p.stderr.strip()))
check("Non-2xx" not in p.stdout and "Socket errors" not in p.stdout, "no failed requests: %s" % p.stdout)
check(get(port, "/work")[0] == 200, "/work answers")
ok, out = ngx.quit()
check(ok, "graceful stop: %s" % out)
check(not log_problems(prefix), "error log clean: %s" % log_problems(prefix)[:3])
files = sorted(os.listdir(prefix + "ljm"))
want = sorted("worker-%d.ljm.gz" % w for w in workers)
check(files == want, "one stream per worker, pid in the name: %s vs %s" % (files, want))
leaks = served(prefix, "/leak")
check(leaks >= nreq, "access log: %d /leak served (wrk: %d)" % (leaks, nreq))
line = trace = live = 0
for f in files:
    rows, info = stream(prefix + "ljm/" + f)
    check(info["complete"], "%s: complete" % f)
    l, t = leak_rows(rows, prefix)
    line, trace = line + l, trace + t
    check(l > 0, "%s: the leaking line app.lua:11 is there (interpreted at first): %d" % (f, l))
    r = subprocess.run([ljm, "report", "-q", prefix + "ljm/" + f], capture_output=True, text=True)
    check(r.returncode == 0 and not r.stderr and "app.lua:11" in r.stdout,
          "%s: ljm report: %d %s" % (f, r.returncode, r.stderr))
    r = subprocess.run([ljm, "report", "--leak-only", prefix + "ljm/" + f], capture_output=True, text=True)
    for m in re.finditer(r"^(TRACE \[\d+\] started at )?@%slua/app\.lua:\d+ holds \d+B: (\d+) allocs, (\d+) frees"
                         % re.escape(prefix), r.stdout, re.M):
        live += int(m.group(2)) - int(m.group(3))
# Each /leak request keeps one record table (a table, and its hash part
# when interpreted): at least one allocation per request, at most three,
# and they are all still alive when the worker stops.
print("%d /leak requests served; leak allocations: line %d, traces %d; live at stop %d"
      % (leaks, line, trace, live))
check(trace > 0, "JIT on: the handler's allocations charged to its trace (%d)" % trace)
check(leaks <= line + trace <= 3 * leaks,
      "leak allocations %d (line %d + trace %d) for %d requests" % (line + trace, line, trace, leaks))
check(live >= leaks, "leak-only: %d app.lua allocations live at stop, >= %d requests" % (live, leaks))

# -- always.conf with sample = "8k", stacks = true ---------------------------
# A sampled recording per worker: the streams say their rate, and the
# leak's estimated allocations and live blocks match the requests served
# (a looser range than exact: about 300 samples behind them).
prefix, (port, ctl) = make_prefix(top, "sampled", example, so)
conf = open(prefix + "always.conf").read().replace(
    'require("ljm_nginx").always{ flush = 1 }',
    'require("ljm_nginx").always{ flush = 1, sample = "8k", stacks = true }')
open(prefix + "always.conf", "w").write(conf)
ngx = Nginx(prefix, "always.conf", testlib.module_env(so))
check(ngx.wait_ready(port), "nginx started (sampled)")
p, nreq = wrk(port, "/leak", 4)
check(p.returncode == 0 and nreq > 1000 and "Non-2xx" not in p.stdout,
      "wrk ran against sampled recording: %d requests" % nreq)
ok, out = ngx.quit()
check(ok and not log_problems(prefix), "graceful stop, error log clean (sampled): %s"
      % log_problems(prefix)[:3])
leaks = served(prefix, "/leak")
est = live = 0
for f in sorted(os.listdir(prefix + "ljm")):
    out_json = prefix + f + ".json"
    r = subprocess.run([ljm, "convert", "-o", out_json, prefix + "ljm/" + f],
                       capture_output=True, text=True)
    if not check(r.returncode == 0, "%s: converts: %s" % (f, r.stderr)):
        continue
    doc = json.load(open(out_json))
    check(doc["stream"]["sample_rate"] == 8192 and doc["stream"]["stacks"] and
          not doc["stream"]["truncated"], "%s: complete, sampled at 8 KiB, with stacks" % f)
    app = prefix + "lua/app.lua"
    for site in doc["sites"]:
        if ("@" + app + ":") in site["name"]:
            est += site["alloc_count"]
            live += site["inuse_count"]
print("sampled: %d /leak served; estimated app.lua allocations %d, live at stop %d" % (leaks, est, live))
check(0.6 * leaks <= est <= 3.6 * leaks,
      "sampled: estimated leak allocations %d for %d requests (exact: 1 to 3 each)" % (est, leaks))
check(live >= 0.6 * leaks, "sampled: estimated live leak blocks %d, for %d requests" % (live, leaks))

# -- SIGKILL a recording worker ----------------------------------------------
prefix, (port, ctl) = make_prefix(top, "killed", example, so)
ngx = Nginx(prefix, "always.conf", testlib.module_env(so))
check(ngx.wait_ready(port), "nginx started again")
victim = ngx.workers()[0]
load = subprocess.Popen(["wrk", "-t2", "-c16", "-d5s", "http://127.0.0.1:%d/leak" % port],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
time.sleep(3)  # past the example's 1 s flush interval, twice
os.kill(victim, signal.SIGKILL)
load.communicate(timeout=60)
time.sleep(1)
survivors = ngx.workers()
check(victim not in survivors and len(survivors) == 2, "worker respawned: %s" % survivors)
ok, out = ngx.quit()
check(ok, "graceful stop after the kill")
path = prefix + "ljm/worker-%d.ljm.gz" % victim
rows, info = stream(path)
l, t = leak_rows(rows, prefix)
check(not info["complete"] and l + t > 1000,
      "killed worker's stream cut, with what was flushed: %d leak events" % (l + t))
r = subprocess.run([ljm, "report", "-q", path], capture_output=True, text=True)
check("app.lua:11" in r.stdout and r.stderr.count("\n") == 1 and
      "stops without its 0x80 end marker" in r.stderr,
      "ljm report reads the cut stream, one-line warning: %r" % r.stderr)
others = [f for f in os.listdir(prefix + "ljm") if f != os.path.basename(path)]
check(len(others) == 2 and all(stream(prefix + "ljm/" + f)[1]["complete"] for f in others),
      "the other worker and the respawned one: complete streams %s" % others)

# -- on-demand.conf ----------------------------------------------------------
prefix, (port, ctl) = make_prefix(top, "ondemand", example, so)
ngx = Nginx(prefix, "on-demand.conf", testlib.module_env(so))
check(ngx.wait_ready(port), "nginx started (on demand)")
workers = ngx.workers()
wrk(port, "/leak", 1)
check(os.listdir(prefix + "ljm") == [], "nothing recorded before /ljm/start")
check(get(ctl, "/ljm/start?seconds=0")[0] == 400, "start: seconds must be positive")
st, body = get(ctl, "/ljm/start?seconds=3")
check(st == 200 and body.startswith("recording 1 for 3 s"), "start: %d %r" % (st, body))
time.sleep(1)
check(get(ctl, "/ljm/status")[1].startswith("recording 1"), "status: recording")
p, nreq = wrk(port, "/leak", 1)
check(sorted(os.listdir(prefix + "ljm")) == sorted("ondemand-1-%d.ljm.gz" % w for w in workers),
      "every worker records: %s" % os.listdir(prefix + "ljm"))
time.sleep(2.5)  # the time limit ends the recordings, no /ljm/stop
check(get(ctl, "/ljm/status")[1].startswith("not recording"), "status: not recording")
done = [stream(prefix + "ljm/" + f)[1]["complete"] for f in os.listdir(prefix + "ljm")]
check(done == [True, True], "complete after the time limit, before nginx stops: %s" % done)
ok, out = ngx.quit()
check(ok, "graceful stop (on demand)")
check(not log_problems(prefix), "error log clean (on demand): %s" % log_problems(prefix)[:3])

# -- A full disk ------------------------------------------------------------
# ljm/ is a 64 KiB tmpfs (in a private mount namespace): the first hand-over
# fails. Each worker logs it once, with the path once, while it runs (the
# example polls is_running()), and nothing more when it exits.
prefix, (port, ctl) = make_prefix(top, "full", example, so)


class FullNginx(Nginx):
    def __init__(self, prefix_, conf, env=None):
        self.prefix = prefix_
        mount = "mount -t tmpfs -o size=64k,mode=0777 tmpfs %sljm && exec \"$@\"" % prefix_
        self.proc = subprocess.Popen(["unshare", "-m", "sh", "-c", mount, "sh", "nginx", "-p", prefix_,
                                      "-c", conf, "-g", "daemon off;"],
                                     env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


ngx = FullNginx(prefix, "always.conf", testlib.module_env(so))
check(ngx.wait_ready(port), "nginx started on a full disk")
workers = ngx.workers()
wrk(port, "/leak", 3)
time.sleep(1.5)  # a flush (1 s), then a poll (0.5 s)
full = [l for l in open(prefix + "logs/error.log") if "No space left on device" in l]
want = {"ljm: %sljm/worker-%d.ljm.gz: No space left on device" % (prefix, w) for w in workers}
check(len(full) == 2 and all(sum(w in l for l in full) == 1 for w in want) and
      all(l.count(prefix + "ljm/") == 1 and "[error]" in l for l in full),
      "full disk: one [error] line per worker, path once, while running: %s" % full)
ok, out = ngx.quit()
check(ok, "graceful stop (full disk)")
after = [l for l in open(prefix + "logs/error.log") if "ljm: " in l and "[notice]" not in l]
check(after == full, "nothing more logged at exit: %s" % after[len(full):])

# -- A recording in init_by_lua, daemon on, reload ---------------------------
# nginx runs init_by_lua before it forks into the background: the recording
# stays with the process that exits, and the daemon's master must be free to
# record, as a reload runs init_by_lua again in a new Lua state there.
prefix, (port, ctl) = make_prefix(top, "daemon", example, so)
conf = open(prefix + "on-demand.conf").read()
conf = conf.replace("pid logs/nginx.pid;", "pid logs/nginx.pid;\ndaemon on;")
conf = conf.replace("    init_worker_by_lua_block {", """    init_by_lua_block {
        local starts = ngx.config.prefix() .. "logs/starts.log"
        local n = 1
        for _ in io.lines(starts) do n = n + 1 end
        local ok, err = require("ljm.recorder").start(ngx.config.prefix() .. "logs/init-" .. n .. ".ljm")
        local f = io.open(starts, "a")
        local ffi = require("ffi")
        pcall(ffi.cdef, "int getpid(void);")
        f:write(n, " ", ffi.C.getpid(), " ", tostring(ok), " ", tostring(err), "\\n")
        f:close()
    }
    init_worker_by_lua_block {""", 1)
open(prefix + "daemon.conf", "w").write(conf)
open(prefix + "logs/starts.log", "w").close()
nginx = ["nginx", "-p", prefix, "-c", "daemon.conf"]


def starts(n, timeout=20):
    end = time.time() + timeout
    while time.time() < end:
        lines = open(prefix + "logs/starts.log").read().splitlines()
        if len(lines) >= n:
            return lines
        time.sleep(0.1)
    return open(prefix + "logs/starts.log").read().splitlines()


p = subprocess.run(nginx, env=testlib.module_env(so), capture_output=True, text=True, timeout=60)
check(p.returncode == 0, "nginx (daemon on) started: %r" % p.stderr[-300:])
first = starts(1)
pid_file = prefix + "logs/nginx.pid"
end = time.time() + 20
while not os.path.exists(pid_file) and time.time() < end:
    time.sleep(0.1)
master = open(pid_file).read().strip() if os.path.exists(pid_file) else "?"
subprocess.run(nginx + ["-s", "reload"], env=testlib.module_env(so), capture_output=True, timeout=60)
end = time.time() + 20
while time.time() < end and not any(ln.split()[1] == master for ln in starts(1)):
    time.sleep(0.1)
lines = [ln.split() for ln in starts(2)]
check(lines and lines[0][1] != master and lines[0][2:] == ["true", "nil"] and
      any(ln[1] == master and ln[2:] == ["true", "nil"] for ln in lines),
      "init_by_lua records before the daemon forks, and again at a reload in the daemon (master %s): %s"
      % (master, lines))
subprocess.run(nginx + ["-s", "quit"], env=testlib.module_env(so), capture_output=True, timeout=60)
end = time.time() + 30
while os.path.exists(pid_file) and time.time() < end:
    time.sleep(0.1)
check(not os.path.exists(pid_file), "nginx (daemon on) stopped")
for n in [int(ln[0]) for ln in lines if ln[2] == "true"]:
    path = prefix + "logs/init-%d.ljm" % n
    rows, info = ljmread.decode(open(path, "rb").read()) if os.path.exists(path) else ({}, {})
    check(info.get("complete"), "init_by_lua recording %d: a complete stream" % n)
check(not log_problems(prefix), "error log clean (daemon, reload): %s" % log_problems(prefix)[:3])

shutil.rmtree(top, ignore_errors=True)
sys.exit(check.done(minimum=20))
