#!/usr/bin/env python3
"""pprof_nginx_test.py -- Go's /debug/pprof/heap and /debug/pprof/allocs from
a real nginx (the OpenResty example's pprof.conf and on-demand.conf), read
by go tool pprof over HTTP.

pprof.conf, two workers recording exactly with stacks (the example samples;
exact here, so that counts are counts). /leak keeps one record table per
request (app.lua:11, in app.M.leak); wrk's load for a second reaches both
workers:

* /heap: a gzipped profile with Go's four sample types, inuse_space shown;
  `go tool pprof -top URL` lists app.M.leak; the objects it holds are at
  least the /leak requests nginx served and at most three per request;
* ?worker=0 and ?worker=1: each worker's stream alone (its comment names
  that worker's stream), and the merged profile holds the sum of the two
  (between a merged fetch before them and one after: the collector may
  free a leftover meanwhile);
* /allocs: the same figures, alloc_space shown;
* ?seconds=2 while more /leak requests are made: the allocations of those
  seconds only (a window comment; app.M.leak's allocations those requests'
  and fewer than the whole profile's), alloc_space shown;
* -diff_base between two fetches with /leak requests between them:
  app.M.leak's in-use objects grew by at least those requests;
* idle for seconds, ?seconds=2: nothing of app.M.leak (each stream ends at
  its worker's last poll);
* `go tool pprof -http` on the live URL: its top page lists app.M.leak;
* after a reload (SIGHUP), the new workers' streams are served;
* bad requests: an unknown profile, a worker or seconds out of range, in one
  line with 404 / 400; nothing above [notice] in nginx's error log.

on-demand.conf: before /ljm/start the endpoint answers 503 in one line,
after it a profile; ?seconds=1 on its streams (no time marks) a 400.

usage: pprof_nginx_test.py LJM RECORDER_SO EXAMPLE_FILES..."""
import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from checks import Checks
from nginxlib import Nginx, free_port, log_problems, make_prefix, scratch_top

import testlib

ljm, so = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
example = os.path.dirname(os.path.abspath([f for f in sys.argv[3:] if f.endswith("pprof.conf")][0]))
check = Checks("pprof_nginx")
top = scratch_top()
os.chmod(ljm, 0o755)
# The workers (www-data) run ljm convert: a copy they can reach.
# ljm is a wrapper around it that notes the nice value each conversion runs
# at, and fails in one line while FAIL exists.
LJM_BIN = os.path.join(top, "ljm-bin")
shutil.copy(ljm, LJM_BIN)
os.chmod(LJM_BIN, 0o755)
NICES, FAIL = os.path.join(top, "nices"), os.path.join(top, "fail")
open(NICES, "w").close()
os.chmod(NICES, 0o666)
LJM = os.path.join(top, "ljm")
with open(LJM, "w") as fh:
    fh.write("#!/bin/sh\nread -r stat < /proc/self/stat\n"
             "echo \"${stat#*) }\" | cut -d' ' -f17 >> '%s'\n"
             "if [ -e '%s' ]; then echo 'ljm convert: boom: cannot convert' >&2; exit 3; fi\n"
             "exec '%s' \"$@\"\n" % (NICES, FAIL, LJM_BIN))
os.chmod(LJM, 0o755)
os.chmod(top, 0o755)
PPROF_TMP = tempfile.mkdtemp(prefix="pprof-")
ENV = dict(os.environ, PPROF_TMPDIR=PPROF_TMP, HOME=PPROF_TMP)
INIT = 'require("ljm_nginx").always{ flush = 1, stacks = true, sample = "512k", ljm = "ljm" }'
EXACT = 'require("ljm_nginx").always{ flush = 1, stacks = true, ljm = "%s" }' % LJM


def tmpnames():
    """Lua's os.tmpname() files in /tmp."""
    return [f for f in os.listdir("/tmp") if f.startswith("lua_")]


TMP_BEFORE = set(tmpnames())


def fetch(port, path, timeout=60):
    """(status, headers, body bytes) of GET path."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def hits(port, path, n):
    for _ in range(n):
        fetch(port, path)


def pprof(*args):
    return subprocess.run(["go", "tool", "pprof"] + list(args), capture_output=True, text=True,
                          env=ENV, timeout=120)


def save(name, body):
    path = os.path.join(PPROF_TMP, name)
    with open(path, "wb") as fh:
        fh.write(body)
    return path


def raw(*args):
    """go tool pprof -raw ARGS: (sample type line, whole output, samples as
    (values, location ids), location id -> its function and line)."""
    out = pprof("-raw", *args).stdout
    header, sec, samples, locs = "", None, [], {}
    for line in out.splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            sec = line
        elif sec == "Samples:" and line.startswith("alloc_objects/count"):
            header = line
        elif sec == "Samples:" and re.match(r"^\s*-?\d+(\s+-?\d+){3,4}:", line):  # temp_objects
            vals, _, ids = line.partition(":")
            samples.append(([int(v) for v in vals.split()], ids.split()))
        elif sec == "Samples:" and re.match(r"^[\s\d]+$", line) and samples:
            samples[-1][1].extend(line.split())  # a long stack goes on
        # (other lines of a sample: its labels)
        elif sec == "Locations":
            m = re.match(r"^\s*(\d+): 0x\S+ M=\d+ (.*)$", line)
            if m:
                locs[m.group(1)] = m.group(2)
    return header, out, samples, locs


def under(func, *args):
    """[alloc_objects, alloc_space, inuse_objects, inuse_space] summed over
    the samples whose stack holds function func, in go tool pprof -raw ARGS
    (an exact profile's fifth column, temp_objects, left out)."""
    _, _, samples, locs = raw(*args)
    mine = {i for i, text in locs.items() if text.startswith(func + " ")}
    sums = [0, 0, 0, 0]
    for vals, ids in samples:
        if mine.intersection(ids):
            sums = [x + v for x, v in zip(sums, vals)]
    return sums


def leak_objects(path):
    """app.M.leak's in-use and allocated objects."""
    s = under("app.M.leak", path)
    return s[2], s[0]


def start(conf, init):
    prefix, (port, ctl) = make_prefix(top, conf.split(".")[0], example, so)
    text = open(prefix + conf).read()
    if init:
        assert INIT in text
        text = text.replace(INIT, init)
    text = text.replace('ljm = "ljm"', 'ljm = "%s"' % LJM)
    if 'ljm = "' not in text:
        text = text.replace('require("ljm_nginx").on_demand{', 'require("ljm_nginx").on_demand{ ljm = "%s",' % LJM)
    open(prefix + conf, "w").write(text)
    ng = Nginx(prefix, conf, testlib.module_env(so))
    return prefix, port, ctl, ng


# -- pprof.conf, exact -------------------------------------------------------
prefix, port, ctl, ng = start("pprof.conf", EXACT)
if check(ng.wait_ready(port), "pprof.conf: nginx up"):
    # wrk's connections reach both workers (one client's requests in turn
    # often reach one).
    w = subprocess.run(["wrk", "-t2", "-c8", "-d1s", "http://127.0.0.1:%d/leak" % port],
                       capture_output=True, text=True, timeout=60)
    check(w.returncode == 0, "wrk ran (%r)" % w.stderr[-300:])
    hits(port, "/work", 50)
    time.sleep(2.0)  # the workers' flush (1 s) and poll (0.5 s)
    served = sum(1 for l in open(prefix + "logs/access.log") if '"GET /leak HTTP/1.1" 200 ' in l)
    st, hd, body = fetch(ctl, "/debug/pprof/heap")
    ok = check(st == 200 and body[:2] == b"\x1f\x8b" and
               hd.get("Content-Type") == "application/octet-stream",
               "/heap: 200, gzip, application/octet-stream (%s %s %r)"
               % (st, hd.get("Content-Type"), body[:120]))
    heap = save("heap.pb.gz", body) if ok else None
    if heap:
        header, out, _, _ = raw(heap)
        check(re.search(r"alloc_objects/count alloc_space/bytes inuse_objects/count "
                        r"inuse_space/bytes\[dflt\]", header) is not None,
              "/heap: Go's sample types, inuse_space shown (%r)" % header)
        streams = sorted(os.listdir(prefix + "ljm"))
        check(len(streams) == 2 and all(s in out for s in streams),
              "/heap: the comments name both workers' streams (%s)" % streams)
        p = pprof("-top", "http://127.0.0.1:%d/debug/pprof/heap" % ctl)
        check(p.returncode == 0 and "app.M.leak" in p.stdout and "Type: inuse_space" in p.stdout,
              "go tool pprof -top URL: app.M.leak, inuse_space (%r %r)"
              % (p.stdout[-800:], p.stderr[-300:]))
        inuse, allocd = leak_objects(heap)
        check(served > 0 and served <= inuse <= 3 * served + 10,
              "/heap: app.M.leak holds one to three objects per /leak request (%d for %d)"
              % (inuse, served))
        # Each worker alone, and the merged profile their sum.
        per = []
        for w in (0, 1):
            st, _, b = fetch(ctl, "/debug/pprof/heap?worker=%d" % w)
            if check(st == 200 and b[:2] == b"\x1f\x8b", "?worker=%d: 200 (%s %r)" % (w, st, b[:100])):
                path = save("w%d.pb.gz" % w, b)
                _, wout, _, _ = raw(path)
                named = [s for s in streams if s in wout]
                check(len(named) == 1, "?worker=%d: one stream's comment (%s)" % (w, named))
                per.append((named, leak_objects(path)))
        if len(per) == 2:
            check(per[0][0] != per[1][0], "?worker=0 and 1 are different streams")
            # No /leak request after the load: what app.M.leak holds only
            # shrinks (the collector may free a leftover), so the sum of the
            # workers' lies between a merged fetch before and one after.
            st, _, b = fetch(ctl, "/debug/pprof/heap")
            later = leak_objects(save("later.pb.gz", b))[0] if st == 200 else -1
            both = per[0][1][0] + per[1][1][0]
            check(later <= both <= inuse and inuse - later <= 10,
                  "merged: app.M.leak's objects the sum of the workers' (%d + %d; merged %d "
                  "before, %d after)" % (per[0][1][0], per[1][1][0], inuse, later))
        st, _, b = fetch(ctl, "/debug/pprof/allocs")
        if check(st == 200, "/allocs: 200 (%s)" % st):
            header = raw(save("allocs.pb.gz", b))[0]
            check(header.endswith("alloc_space/bytes[dflt] inuse_objects/count inuse_space/bytes") or
                  "alloc_space/bytes[dflt]" in header, "/allocs: alloc_space shown (%r)" % header)

        # ?seconds=2: the allocations of those seconds. The window counts back
        # from each worker's last time mark (a poll, a flush: up to a second
        # before the conversion), so first a quiet gap longer than that slack:
        # the load before must not reach into it.
        time.sleep(3)
        res = {}
        t = threading.Thread(target=lambda: res.update(r=fetch(ctl, "/debug/pprof/heap?seconds=2")))
        t.start()
        time.sleep(0.2)
        hits(port, "/leak", 100)
        t.join(120)
        st, _, b = res.get("r", (0, None, b""))
        if check(st == 200 and b[:2] == b"\x1f\x8b", "?seconds=2: 200 (%s %r)" % (st, b[:200])):
            delta = save("delta.pb.gz", b)
            header, out, _, _ = raw(delta)
            check("window:" in out and "alloc_space/bytes[dflt]" in header,
                  "?seconds=2: a window, alloc_space shown (%r)" % header)
            _, allocd_delta = leak_objects(delta)
            check(100 <= allocd_delta <= 3 * 100 + 10 and allocd_delta < allocd,
                  "?seconds=2: app.M.leak allocated one to three objects per request of those "
                  "seconds (%d for 100; the whole recording %d)" % (allocd_delta, allocd))

        # -diff_base: what grew between two fetches.
        time.sleep(1.2)
        st, _, b = fetch(ctl, "/debug/pprof/heap")
        base = save("base.pb.gz", b) if st == 200 else None
        hits(port, "/leak", 200)
        time.sleep(1.6)
        st, _, b = fetch(ctl, "/debug/pprof/heap")
        after = save("after.pb.gz", b) if st == 200 else None
        if check(base and after, "two fetches for -diff_base"):
            grown = under("app.M.leak", "-diff_base", base, after)[2]
            check(200 <= grown <= 3 * 200 + 10,
                  "-diff_base: app.M.leak's in-use objects grew by one to three per request "
                  "between the fetches (%d for 200)" % grown)

        # An idle server's last seconds hold nothing of the load before them:
        # each stream ends at its worker's last poll, not its last event.
        time.sleep(4)
        st, _, b = fetch(ctl, "/debug/pprof/allocs?seconds=2")
        if check(st == 200, "idle ?seconds=2: 200 (%s %r)" % (st, b[:200])):
            _, idle_allocs = leak_objects(save("idle.pb.gz", b))
            check(idle_allocs == 0, "idle ?seconds=2: app.M.leak allocated nothing in those "
                  "seconds (%d)" % idle_allocs)

        # go tool pprof -http on the live URL.
        hport = free_port()
        web = subprocess.Popen(["go", "tool", "pprof", "-no_browser", "-http=127.0.0.1:%d" % hport,
                                "http://127.0.0.1:%d/debug/pprof/heap" % ctl],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=ENV)
        page = ""
        for _ in range(100):
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/ui/top" % hport, timeout=5) as r:
                    page = r.read().decode()
                break
            except OSError:
                time.sleep(0.3)
        web.kill()
        web.wait()
        check("app.M.leak" in page, "go tool pprof -http URL: its top page lists app.M.leak (%d bytes)"
              % len(page))

    # A reload: the new workers' streams are served (an old worker's exit
    # leaves the name its successor registered).
    old_workers = set(ng.workers())
    ng.proc.send_signal(signal.SIGHUP)
    for _ in range(100):
        now = set(ng.workers())
        if len(now) == 2 and not now & old_workers:
            break
        time.sleep(0.1)
    hits(port, "/leak", 20)
    time.sleep(2.0)
    st, _, b = fetch(ctl, "/debug/pprof/heap")
    new_streams = ["worker-%d.ljm.gz" % pid for pid in ng.workers()]
    named = raw(save("reloaded.pb.gz", b))[1] if st == 200 else ""
    check(st == 200 and any(n in named for n in new_streams),
          "after a reload: the new workers' streams (%s; %s %r)" % (new_streams, st, b[:120]))

    # A conversion that fails: a 500 with ljm's last line; each one ran at
    # the default nice, 10.
    open(FAIL, "w").close()
    st, _, b = fetch(ctl, "/debug/pprof/heap")
    os.unlink(FAIL)
    check(st == 500 and b.count(b"\n") == 1 and b"boom: cannot convert" in b,
          "a conversion that fails: 500 with its error in one line (%s %r)" % (st, b))
    nices = open(NICES).read().split()
    check(len(nices) >= 10 and set(nices) == {"10"},
          "every conversion ran at nice 10 (%d: %s)" % (len(nices), sorted(set(nices))))

    def thread_nices(pid):
        out = []
        for t in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/stat" % (pid, t)) as fh:
                out.append(fh.read().rsplit(")", 1)[1].split()[16])
        return out
    # ... inherited from the thread pool's thread (no `nice` process each).
    tn = [thread_nices(pid) for pid in ng.workers()]
    check(any(n.count("10") == 1 and n.count("0") == len(n) - 1 for n in tn),
          "a worker's thread pool thread runs at nice 10, its other threads at 0 (%s)" % tn)

    # Bad requests: one line each.
    for path, want in (("/debug/pprof/goroutine", 404), ("/debug/pprof/heap?worker=2", 400),
                       ("/debug/pprof/heap?worker=x", 400), ("/debug/pprof/heap?seconds=0", 400),
                       ("/debug/pprof/heap?seconds=601", 400), ("/debug/pprof/heap?seconds=1.5", 400)):
        st, _, b = fetch(ctl, path)
        check(st == want and b.count(b"\n") == 1, "%s: %d in one line (%s %r)" % (path, want, st, b))
ok, out = ng.quit()
check(ok, "pprof.conf: nginx stopped gracefully (%s)" % out[-300:])
check(not log_problems(prefix), "pprof.conf: nothing above [notice] in the error log: %s"
      % log_problems(prefix)[:3])
check(not set(tmpnames()) - TMP_BEFORE, "the conversions leave no temporary file (%s)"
      % sorted(set(tmpnames()) - TMP_BEFORE))

# -- on-demand.conf: 503 before /ljm/start, a profile after -----------------
prefix, port, ctl, ng = start("on-demand.conf", None)
if check(ng.wait_ready(port), "on-demand.conf: nginx up"):
    st, _, b = fetch(ctl, "/debug/pprof/heap")
    check(st == 503 and b.count(b"\n") == 1, "on demand, before /ljm/start: 503 in one line (%s %r)"
          % (st, b))
    fetch(ctl, "/ljm/start?seconds=30")
    time.sleep(1.2)  # the workers' poll (0.5 s)
    hits(port, "/leak", 50)
    time.sleep(1.6)
    st, _, b = fetch(ctl, "/debug/pprof/heap")
    check(st == 200 and b[:2] == b"\x1f\x8b", "on demand, recording: a profile (%s %r)" % (st, b[:200]))
    # The example records on demand without time marks: no window.
    st, _, b = fetch(ctl, "/debug/pprof/heap?seconds=1")
    check(st == 400 and b.count(b"\n") == 1 and b"time marks" in b,
          "on demand, ?seconds=1 on streams without time marks: 400 in one line, at once (%s %r)"
          % (st, b))
    fetch(ctl, "/ljm/stop")
ok, out = ng.quit()
check(ok, "on-demand.conf: nginx stopped gracefully (%s)" % out[-300:])
check(not log_problems(prefix), "on-demand.conf: nothing above [notice] in the error log: %s"
      % log_problems(prefix)[:3])

shutil.rmtree(PPROF_TMP, ignore_errors=True)
sys.exit(check.done(minimum=30))
