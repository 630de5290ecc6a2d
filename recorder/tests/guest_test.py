#!/usr/bin/env python3
"""guest_test.py -- the recorder never hangs its host nor takes a file that
is not its own (issue: forks it cannot see, paths that collide, readers
that stall):

* forks: a child made by syscall(SYS_fork) (no pthread_atfork handler
  runs) or glibc's fork() allocates as much as its parent, under `ljm
  record` (exact, --stacks, --sample), the Lua module and the C API
  (guest_host): nothing hangs, the parent's stream is complete and holds
  none of the child's events, the child's copy reports ECHILD and a new
  lua_State of the child records a stream of its own; a vfork()-style
  clone running Lua on the parent's VM and posix_spawn() leave the
  parent's stream whole;
* collisions: a snapshot onto a live stream's file (its path or a hard
  link), onto the running script, `ljm record` with -o, --snapshot-at-exit
  and the script naming one file: refused, nothing overwritten; a
  user's file or link at the snapshot's temporary name is left alone;
* stalls: a FIFO whose reader never reads, or that no reader opens, ends
  the recording after the write timeout with a message and the script
  runs to its end;
* snapshots from finalizers (collectgarbage(), lua_close()) are taken;
  strings with a NUL byte are refused as options and paths.
usage: guest_test.py LJM_RECORD RECORDER_SO GUEST_HOST"""
import errno
import os
import subprocess
import sys
import threading
import time

import testlib

import ljmread  # tests/lib/ljmread.py, the shared stream reader

res = testlib.Results("guest")
tool = testlib.runfile(sys.argv[1])
so = testlib.runfile(sys.argv[2])
host = testlib.runfile(sys.argv[3])
work = testlib.scratch("guest")
menv = testlib.module_cpath(so, "guest-cpath")
# LeakSanitizer's exit check in a child forked from threads (the writer's)
# inherits their stale list and can hang: off in these runs.
env = dict(testlib.vm_env(), ASAN_OPTIONS="detect_leaks=0")
menv["ASAN_OPTIONS"] = "detect_leaks=0:verify_asan_link_order=0"
N = 1000000  # allocations of parent and child: more than a buffer holds


def write(name, text):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def run(cmd, timeout=120, **kw):
    kw.setdefault("env", env)
    try:
        return testlib.run(cmd, cwd=work, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, "timeout", e.stdout or "", "timed out after %ds" % timeout)


def stream(path):
    """(whole, rows, problems): whether the stream is complete with nothing
    after its end marker and no rule of the extension broken; its
    allocations per location ("@x.lua:3", "=chunk:2")."""
    try:
        st = ljmread.parse(open(path, "rb").read())
    except (OSError, ValueError, ljmread.Truncated) as e:
        return False, {}, [repr(e)]
    rows = {}
    for e in st.events:
        if e.ev == ljmread.ALLOC:
            rows[e.name] = rows.get(e.name, 0) + 1
    return st.complete and not st.problems, rows, st.problems[:3]


def at(rows, where):
    """Allocations at a location, or at every line of a chunk ("=child:")."""
    return sum(n for k, n in rows.items() if k == where or (where.endswith(":") and k.startswith(where)))


# -- 1. Forks the recorder cannot see -------------------------------------

FORK_LUA = r"""local ffi = require("ffi") jit.off()
ffi.cdef[[ long syscall(long n, ...); int fork(void); int waitpid(int pid, int *st, int opt);
           void _exit(int); ]]
local how, n, module, out, opts = arg[1], tonumber(arg[2]), arg[3], arg[4], arg[5]
local rec
if module == "module" then
  rec = require("ljm.recorder")
  local o = opts == "sampled" and {sample = 64, seed = 3} or opts == "stacks" and {stacks = true} or nil
  assert(rec.start(out, o))
end
local function parent_work(k)
  local t = {} for i = 1, k do t[i % 1000 + 1] = {i} end
end
local function child_work(k)
  local t = {} for i = 1, k do t[i % 1000 + 1] = {i} end
end
local pid
if how == "raw" then
  -- fork(2) on x86-64 (57); elsewhere clone(SIGCHLD), which is fork
  pid = tonumber(ffi.arch == "x64" and ffi.C.syscall(57) or ffi.C.syscall(220, 17, 0, 0, 0, 0))
else
  pid = ffi.C.fork()
end
if pid == 0 then
  child_work(n)
  if rec then
    local ok, msg, code = rec.stop()
    if ok or code ~= 10 then io.stderr:write("child stop: ", tostring(msg), "\n") ffi.C._exit(3) end
  end
  ffi.C._exit(0)
end
parent_work(n)
local st = ffi.new("int[1]")
ffi.C.waitpid(pid, st, 0)
if rec then
  local ok, msg = rec.stop()
  if not ok then print("stop: " .. msg) end
end
print("child status " .. st[0])
"""
write("fork.lua", FORK_LUA)
PARENT, CHILD = "@fork.lua:12", "@fork.lua:15"
FORK_RUNS = [("raw", m, v) for m in ("exact", "stacks", "sampled") for v in ("record", "module")]
FORK_RUNS += [("glibc", "exact", "record"), ("glibc", "sampled", "module")]
for how, mode, via in FORK_RUNS:
    tag = "%s fork, %s, %s" % (how, mode, via)
    out = os.path.join(work, "fork-%s-%s-%s.ljm" % (how, mode, via))
    if via == "record":
        opt = {"exact": [], "stacks": ["--stacks"], "sampled": ["--sample", "1k"]}[mode]
        p = run([tool, "-o", out] + opt + ["fork.lua", how, str(N), "-"])
    else:
        p = run([testlib.LUAJIT, "fork.lua", how, str(N), "module", out, mode], env=menv)
    res.check(p.returncode == 0 and p.stdout.endswith("child status 0\n"),
              "%s: runs to its end (exit %s, %r, %r)" % (tag, p.returncode, p.stdout[-200:], p.stderr[-300:]))
    whole, rows, problems = stream(out)
    res.check(whole, "%s: the parent's stream is whole (%s)" % (tag, problems))
    res.check(at(rows, CHILD) == 0 and at(rows, PARENT) > 0,
              "%s: the parent's events only (parent %d, child %d)"
              % (tag, at(rows, PARENT), at(rows, CHILD)))
    if mode != "sampled":
        res.check(N <= at(rows, PARENT) <= N + 20, "%s: every parent allocation (%d)"
                  % (tag, at(rows, PARENT)))

# The C API: forks by system call and by glibc, a vfork()-style child running
# Lua on the parent's VM, posix_spawn().
HOST_RUNS = [("rawfork", m) for m in ("exact", "stacks", "sampled")]
HOST_RUNS += [("rawfork-start", "stacks")]
HOST_RUNS += [("fork", "exact"), ("fork", "sampled"), ("clonevm", "exact"), ("clonevm", "sampled"),
              ("spawn", "stacks")]
for scen, mode in HOST_RUNS:
    tag = "guest_host %s %s" % (scen, mode)
    d = os.path.join(work, "host-%s-%s" % (scen, mode))
    os.makedirs(d, exist_ok=True)
    p = run([host, d, scen, mode], timeout=180)
    res.check(p.returncode == 0, "%s: exit %s: %s %s" % (tag, p.returncode, p.stdout[-500:], p.stderr[-300:]))
    whole, rows, problems = stream(os.path.join(d, "parent.ljm"))
    res.check(whole, "%s: the parent's stream is whole (%s)" % (tag, problems))
    exact = mode != "sampled"
    if scen in ("rawfork", "fork"):
        res.check(at(rows, "=child:") == 0 and (not exact or N <= at(rows, "=parent:2") <= N + 20),
                  "%s: the parent's events only (parent %d, child %d)"
                  % (tag, at(rows, "=parent:2"), at(rows, "=child:")))
        whole2, rows2, problems2 = stream(os.path.join(d, "child2.ljm"))
        res.check(whole2 and (not exact or 1000 <= at(rows2, "=child2:2") <= 1020),
                  "%s: the child's own lua_State recorded (%s, %d)"
                  % (tag, problems2, at(rows2, "=child2:2")))
    elif scen == "rawfork-start":
        whole2, rows2, problems2 = stream(os.path.join(d, "child2.ljm"))
        res.check(whole and at(rows, "=parent:2") >= 1000 and whole2 and at(rows2, "=child2:2") >= 1000,
                  "%s: the last parent's and child's streams (%s, %s)" % (tag, problems, problems2))
    elif scen == "clonevm":
        # The child's tables are in the parent's heap: they are its events.
        res.check(not exact or 5000 <= at(rows, "=vchild:2") <= 5020,
                  "%s: the vfork()-style child's allocations on the parent's VM (%d)"
                  % (tag, at(rows, "=vchild:2")))
    else:
        res.check(not exact or 20000 <= at(rows, "=parent:2") <= 20100,
                  "%s: every allocation around posix_spawn (%d)" % (tag, at(rows, "=parent:2")))

# -- 2-4. Outputs that collide --------------------------------------------

write("alloc.lua", "local t = {}\nfor i = 1, 10000 do t[i] = {i} end\nprint('ran')\n")
ALLOC_SRC = open(os.path.join(work, "alloc.lua")).read()
for argv, names in (
        (["-o", "same.ljm", "--snapshot-at-exit", "same.ljm", "alloc.lua"], ["same.ljm"]),
        (["-o", "alloc.lua", "alloc.lua"], ["alloc.lua"]),
        (["-o", "x.ljm", "--snapshot-at-exit", "alloc.lua", "alloc.lua"], ["alloc.lua"]),
        (["-o", "./sub/../alloc.lua", "alloc.lua"], ["alloc.lua"])):
    os.makedirs(os.path.join(work, "sub"), exist_ok=True)
    for f in ("same.ljm", "x.ljm"):
        if os.path.exists(os.path.join(work, f)):
            os.unlink(os.path.join(work, f))
    p = run([tool] + argv)
    lines = p.stderr.strip().splitlines()
    res.check(p.returncode == 2 and len(lines) == 1 and "same file" in lines[0] and p.stdout == "" and
              all(n in lines[0] for n in names),
              "ljm record %s: a usage error naming the file, nothing run (%s, %r, %r)"
              % (" ".join(argv), p.returncode, p.stdout, p.stderr))
    res.check(open(os.path.join(work, "alloc.lua")).read() == ALLOC_SRC and
              not os.path.exists(os.path.join(work, "same.ljm")) and
              not os.path.exists(os.path.join(work, "x.ljm")),
              "ljm record %s: the script untouched, no file made" % " ".join(argv))

COLLIDE_LUA = r"""local rec = require("ljm.recorder") jit.off()
local ffi = require("ffi")
ffi.cdef "int getpid(void);"
local function show(tag, ok, msg, code) print(tag, tostring(ok), tostring(code), msg or "") end
local mode = arg[1]
local opts = mode == "sampled" and {sample = 64} or mode == "stacks" and {stacks = true} or nil
assert(rec.start("live.ljm", opts))
local t = {}
for i = 1, 1000 do t[i] = {i} end
show("same", rec.snapshot("live.ljm"))
os.execute("ln -f live.ljm hard.ljm")
show("hard", rec.snapshot("hard.ljm"))
show("script", rec.snapshot(arg[0]))
for i = 1, 1000 do t[i] = {i} end
show("stop", rec.stop())
show("start-script", rec.start(arg[0]))
-- A user's file and a user's link at the temporary name the snapshot would
-- have taken first: both stay.
local pid = ffi.C.getpid()
local f = assert(io.open("snap.ljh.tmp" .. pid, "w")) f:write("USER") f:close()
f = assert(io.open("victim.txt", "w")) f:write("VICTIM") f:close()
os.execute("ln -sf victim.txt snap2.ljh.tmp" .. pid)
show("tmpfile", rec.snapshot("snap.ljh"))
show("tmplink", rec.snapshot("snap2.ljh"))
show("nul-path", rec.start("a\0b.ljm"))
show("nul-snap", rec.snapshot("a\0b.ljh"))
show("nul-sample", rec.start("nul.ljm", {sample = "512k\0junk"}))
"""
write("collide.lua", COLLIDE_LUA)
for mode in ("exact", "stacks", "sampled"):
    for f in os.listdir(work):
        if f.startswith(("snap", "live", "hard", "victim", "nul")):
            os.unlink(os.path.join(work, f))
    p = run([testlib.LUAJIT, "collide.lua", mode], env=menv)
    got = {ln.split("\t")[0]: ln.split("\t")[1:] for ln in p.stdout.splitlines()}
    tag = "module %s" % mode
    res.check(p.returncode == 0, "%s: exit %s %r" % (tag, p.returncode, p.stderr[-300:]))
    for key in ("same", "hard", "script", "start-script"):
        v = got.get(key, ["?", "?", ""])
        res.check(v[0] == "nil" and v[1] == str(errno.EBUSY) and ("live.ljm" in v[2] or "collide.lua" in v[2]),
                  "%s: %s refused with EBUSY (%r)" % (tag, key, v))
    res.check(got.get("stop", [""])[0] == "true", "%s: the stream stops cleanly (%r)" % (tag, got.get("stop")))
    whole, rows, problems = stream(os.path.join(work, "live.ljm"))
    res.check(whole and (mode == "sampled" or (at(rows, "@collide.lua:9") >= 1000 and
                                               at(rows, "@collide.lua:14") >= 1000)),
              "%s: live.ljm is still the whole stream, events after the refusals in it (%s, %d, %d)"
              % (tag, problems, at(rows, "@collide.lua:9"), at(rows, "@collide.lua:14")))
    res.check(open(os.path.join(work, "collide.lua")).read() == COLLIDE_LUA, "%s: the script untouched" % tag)
    pid_files = [f for f in os.listdir(work) if f.startswith("snap.ljh.tmp")]
    user = [f for f in pid_files if "." not in f[len("snap.ljh.tmp"):]]
    res.check(got.get("tmpfile", [""])[0] == "true" and len(user) == 1 and
              open(os.path.join(work, user[0])).read() == "USER" and
              open(os.path.join(work, "snap.ljh"), "rb").read(4) == b"ljh\x02",
              "%s: a user's file at the temporary name stays, the snapshot is written (%r, %s)"
              % (tag, got.get("tmpfile"), pid_files))
    links = [f for f in os.listdir(work) if f.startswith("snap2.ljh.tmp")]
    res.check(got.get("tmplink", [""])[0] == "true" and len(links) == 1 and
              os.path.islink(os.path.join(work, links[0])) and
              open(os.path.join(work, "victim.txt")).read() == "VICTIM" and
              open(os.path.join(work, "snap2.ljh"), "rb").read(4) == b"ljh\x02",
              "%s: a user's link at the temporary name stays, its target untouched (%r, %s)"
              % (tag, got.get("tmplink"), links))
    for key in ("nul-path", "nul-snap", "nul-sample"):
        v = got.get(key, ["?", "?", ""])
        res.check(v[0] == "nil" and v[1] == str(errno.EINVAL) and "NUL" in v[2] or
                  (key == "nul-sample" and v[0] == "nil" and v[1] == str(errno.EINVAL)),
                  "%s: %s refused with EINVAL (%r)" % (tag, key, v))
    res.check(not os.path.exists(os.path.join(work, "a")) and not os.path.exists(os.path.join(work, "nul.ljm")),
              "%s: no file made for a string with a NUL byte" % tag)

# -- 5. A reader that stops reading ---------------------------------------

BIG = write("big.lua", "local t = {}\nfor i = 1, 2000000 do t[i % 1000 + 1] = {i} end\n"
                       "io.write('ran to the end\\n')\n")


class StalledReader:
    """Opens the FIFO for reading and never reads (until stop())."""

    def __init__(self, path):
        self.path = path
        self.fd = None
        self.t = threading.Thread(target=self._open, daemon=True)
        self.t.start()

    def _open(self):
        self.fd = os.open(self.path, os.O_RDONLY)

    def stop(self):
        if self.fd is None:  # nobody opened the write end: do so to free the open
            try:
                os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        self.t.join(5)
        if self.fd is not None:
            os.close(self.fd)


for mode in ("exact", "stacks", "sampled"):
    fifo = os.path.join(work, "stall-%s.fifo" % mode)
    os.mkfifo(fifo)
    opt = {"exact": [], "stacks": ["--stacks"], "sampled": ["--sample", "1k"]}[mode]
    reader = StalledReader(fifo)
    t0 = time.time()
    p = run([tool, "--write-timeout", "1", "-o", fifo] + opt + ["big.lua"], timeout=60)
    took = time.time() - t0
    reader.stop()
    tag = "ljm record -o FIFO (a reader that never reads), %s" % mode
    res.check(p.returncode == 1 and p.stdout == "ran to the end\n" and
              "the reader took no data for 1 s (the write timeout)" in p.stderr,
              "%s: the script runs on, the recording ends with a message (exit %s, %r, %r)"
              % (tag, p.returncode, p.stdout, p.stderr[-300:]))
    res.check(took < 30, "%s: done in %.1f s" % (tag, took))

write("stall.lua", """local rec = require("ljm.recorder")
local fifo, mode = arg[1], arg[2]
local o = {write_timeout = 0.5}
if mode == "sampled" then o.sample = 1024 elseif mode == "stacks" then o.stacks = true end
print("start", rec.start(fifo, o))
local t = {}
for i = 1, 2000000 do t[i % 1000 + 1] = {i} end
print("running", rec.is_running())
local ok, msg, code = rec.stop()
print("stop", ok, code, msg)
""")
for mode in ("exact", "stacks", "sampled"):
    fifo = os.path.join(work, "mstall-%s.fifo" % mode)
    os.mkfifo(fifo)
    reader = StalledReader(fifo)
    p = run([testlib.LUAJIT, "stall.lua", fifo, mode], env=menv, timeout=60)
    reader.stop()
    lines = p.stdout.splitlines()
    tag = "module into a FIFO nobody reads, %s" % mode
    res.check(p.returncode == 0 and lines[:2] == ["start\ttrue", "running\tfalse"] and len(lines) == 3 and
              lines[2].startswith("stop\tnil\t%d\t" % errno.ETIMEDOUT) and "write timeout" in lines[2],
              "%s: is_running() false, stop() says why (%s, %r, %r)" % (tag, p.returncode, lines, p.stderr[-300:]))

# A FIFO no reader opens: the start gives up after the timeout.
fifo = os.path.join(work, "noreader.fifo")
os.mkfifo(fifo)
t0 = time.time()
p = run([tool, "--write-timeout", "0.5", "-o", fifo, "alloc.lua"], timeout=60)
res.check(p.returncode == 1 and p.stdout == "" and "no reader opened within 0.5 s" in p.stderr and
          time.time() - t0 < 20,
          "ljm record -o FIFO without a reader: refused after the timeout (%s, %r)" % (p.returncode, p.stderr))
for bad in ("-1", "x", "86401"):
    p = run([tool, "--write-timeout", bad, "alloc.lua"])
    res.check(p.returncode == 2 and "write timeout" in p.stderr, "--write-timeout %s: usage error" % bad)

# -- Snapshots from finalizers --------------------------------------------

write("fin.lua", """local rec = require("ljm.recorder")
local function on_gc(path)
  local p = newproxy(true)
  getmetatable(p).__gc = function() print(path, rec.snapshot(path)) end
  return p
end
local keep = on_gc("atclose.ljh")
do local x = on_gc("ingc.ljh") end
collectgarbage()
collectgarbage()
""")
p = run([testlib.LUAJIT, "fin.lua"], env=menv)
for f in ("ingc.ljh", "atclose.ljh"):
    path = os.path.join(work, f)
    res.check(("%s\ttrue" % f) in p.stdout and os.path.exists(path) and open(path, "rb").read(4) == b"ljh\x02",
              "a snapshot from a finalizer (%s): taken (%r %r)" % (f, p.stdout, p.stderr[-200:]))

res.finish()
