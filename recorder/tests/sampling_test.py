#!/usr/bin/env python3
"""sampling_test.py -- sampled recording (ljm record --sample, the module's
{sample = ...}): the stream says its rate, is far smaller than the exact
one, and over fixed seeds the estimates of every view come out unbiased:
each line's bytes and counts, what is in use at the end, with and without
stacks. Also the options' errors, a second recording refused beside a
sampled one, the downgrade's warning, and a sampled stream without its rate.
usage: sampling_test.py LJM_RECORD RECORDER_SO LJM"""
import json
import functools
import os
import statistics
import subprocess
import sys

import testlib

import ljmread  # tests/lib/ljmread.py, the shared stream reader

res = testlib.Results("sampling")
record = testlib.runfile(sys.argv[1])
so = testlib.runfile(sys.argv[2])
ljm = testlib.runfile(sys.argv[3])
busy = testlib.runfile(sys.argv[4])  # testdata/recorder/stacks/busy.lua
work = testlib.scratch("sampling")

RATE = 16384
SEEDS = [11, 23, 37, 41, 59, 61, 73, 89]

# Deterministic (no JIT: lines are the sites), about 80 MB allocated: small
# strings, tables, big unique strings, an array grown by reallocation and
# coroutines (a thread object and its stack: the wrapper counts a thread's
# bytes on its slow path).
# It ends with a full collection: otherwise a few hundred bytes more or less
# of the VM's own (they vary from run to run) decide whether a 6 MB group of
# garbage is swept before the end, and the exact figure in use with it.
PROG = """if jit then jit.off() end
local keep = {}
local function small(n) local t = {} for i = 1, n do t[i] = "s" .. i .. string.rep("a", i % 40) end return t end
local function rows(n) local t = {} for i = 1, n do t[i] = {i, i * 2, name = "r"} end return t end
local function blobs(n, r) local t = {} for i = 1, n do t[i] = string.rep("b", 30000 + i * 7 + r) end return t end
local function grow(n) local t = {} for i = 1, n do t[#t + 1] = i end return t end
local function nop() end
local function threads(n) local t = {} for i = 1, n do t[i] = coroutine.create(nop) end return t end
for r = 1, 8 do
  local a, b, c, d, e = small(30000), rows(20000), blobs(60, r), grow(100000), threads(5000)
  keep[r % 3] = {a, b, c, d, e}
end
collectgarbage()  -- what is in use at the end: the live data, not wherever the GC stands
"""
prog = os.path.join(work, "prog.lua")
with open(prog, "w") as f:
    f.write(PROG)


run = functools.partial(testlib.run_vm, cwd=work, timeout=300)


def as_json(path):
    out = path + ".json"
    p = run([ljm, "convert", "-o", out, path])
    if not res.check(p.returncode == 0, "convert %s to JSON: %s" % (path, p.stderr[-300:])):
        return None
    with open(out) as f:
        return json.load(f)


def lines(doc):
    """{line name: (alloc_bytes, alloc_count)} of Lua lines, and totals."""
    out = {}
    for s in doc["sites"]:
        if s["kind"] == "lua":
            b, c = out.get(s["name"], (0, 0))
            out[s["name"]] = (b + s["alloc_bytes"], c + s["alloc_count"])
    return out


def folded_total(path):
    out = path + ".folded"
    p = run([ljm, "convert", "-o", out, path])
    if not res.check(p.returncode == 0, "convert %s to folded: %s" % (path, p.stderr[-300:])):
        return 0
    with open(out) as f:
        return sum(int(ln.rsplit(" ", 1)[1]) for ln in f if ln.strip())


# -- Exact, then sampled with each seed ----------------------------------------
exact = os.path.join(work, "exact.ljm")
p = run([record, "-o", exact, prog])
res.check(p.returncode == 0, "exact recording: %s" % p.stderr)
ex = as_json(exact)
ex_lines = lines(ex)
ex_total = ex["totals"]["alloc_bytes"]
big = {k: v for k, v in ex_lines.items() if v[0] >= 0.04 * ex_total}
res.check(len(big) >= 5, "the program has 5 lines of 4%% or more: %r" % big)
# Counts only where there are many: a few small reallocations (the array's
# first doublings) are rare in the sample and each stands for thousands.
ex_count = ex["totals"]["alloc_count"]
many = {k for k, v in big.items() if v[1] >= 0.04 * ex_count}
res.check(len(many) >= 2, "the program has 2 lines of 4%% of the allocations or more: %r" % many)

est = {k: [] for k in big}
cnt = {k: [] for k in big}
totals, inuse, sizes, stacked = [], [], [], []
for seed in SEEDS:
    path = os.path.join(work, "s%d.ljm" % seed)
    p = run([record, "--sample", "16k", "--sample-seed", str(seed), "-o", path, prog])
    res.check(p.returncode == 0, "seed %d: recording: %s" % (seed, p.stderr))
    doc = as_json(path)
    if not doc:
        continue
    res.check(doc["stream"].get("sample_rate") == RATE, "seed %d: the stream says rate %d: %r"
              % (seed, RATE, doc["stream"].get("sample_rate")))
    sizes.append(os.path.getsize(path))
    got = lines(doc)
    for k in big:
        est[k].append(got.get(k, (0, 0))[0])
        cnt[k].append(got.get(k, (0, 0))[1])
    totals.append(doc["totals"]["alloc_bytes"])
    inuse.append(doc["totals"]["inuse_bytes"])

# The same seed samples the same allocations.
again = os.path.join(work, "again.ljm")
run([record, "--sample", "16k", "--sample-seed", str(SEEDS[0]), "-o", again, prog])
d1, d2 = as_json(os.path.join(work, "s%d.ljm" % SEEDS[0])), as_json(again)
# (Within 1%: the VM's own allocations vary a little from run to run.)
b1, b2 = (sum(v[0] for v in lines(d).values()) if d else 0 for d in (d1, d2))
res.check(b1 and abs(b1 - b2) <= 0.01 * b1, "the same seed samples about the same: %d, %d" % (b1, b2))

res.check(sizes and max(sizes) * 5 < os.path.getsize(exact),
          "sampled streams (%r bytes) are a fifth of the exact one (%d) or less"
          % (sizes, os.path.getsize(exact)))


def unbiased(what, exact_v, values, mean_tol, one_tol):
    """Mean of the seeds within mean_tol, each seed within one_tol (about
    four standard deviations at this rate: deterministic seeds, no flakes)."""
    if not values:
        res.check(False, "%s: no estimates" % what)
        return
    m = statistics.mean(values)
    res.check(abs(m - exact_v) <= mean_tol * exact_v,
              "%s: mean estimate %.0f vs exact %d (%.1f%%, tolerance %.0f%%)"
              % (what, m, exact_v, 100.0 * (m - exact_v) / exact_v, 100 * mean_tol))
    worst = max(abs(v - exact_v) / exact_v for v in values)
    res.check(worst <= one_tol, "%s: a seed is %.1f%% off (tolerance %.0f%%): %r"
              % (what, 100 * worst, 100 * one_tol, values))


for k, (b, c) in sorted(big.items()):
    unbiased("%s bytes" % k, b, est[k], 0.08, 0.30)
    if k in many:
        unbiased("%s count" % k, c, cnt[k], 0.10, 0.35)
unbiased("total bytes", ex_total, totals, 0.04, 0.12)
unbiased("bytes in use at the end", ex["totals"]["inuse_bytes"], inuse, 0.10, 0.35)

# -- With stacks: the graph views' totals --------------------------------------
ex_st = os.path.join(work, "exact_stacks.ljm")
run([record, "--stacks", "-o", ex_st, prog])
ex_folded = folded_total(ex_st)
for seed in SEEDS[:4]:
    path = os.path.join(work, "st%d.ljm" % seed)
    p = run([record, "--stacks", "--sample", "16k", "--sample-seed", str(seed), "-o", path, prog])
    res.check(p.returncode == 0, "stacks, seed %d: %s" % (seed, p.stderr))
    stacked.append(folded_total(path))
    doc = as_json(path)
    res.check(doc and doc["stream"]["stacks"] and doc["stream"]["sample_rate"] == RATE,
              "stacks, seed %d: stacks and rate in the stream" % seed)
unbiased("folded total with stacks", ex_folded, stacked, 0.06, 0.15)

# -- The text report says it shows estimates -----------------------------------
p = run([ljm, "report", os.path.join(work, "s%d.ljm" % SEEDS[0])])
res.check(p.returncode == 0 and p.stdout.startswith("SAMPLED: estimates from a sampled recording "
                                                    "(one allocated byte in 16 KiB)"),
          "ljm report's first line: %r" % p.stdout[:120])

# -- Downgrade: raw samples, said on stderr ------------------------------------
std = os.path.join(work, "std.ljm")
p = run([ljm, "convert", "-f", "ljm", "-o", std, os.path.join(work, "s%d.ljm" % SEEDS[0])])
res.check(p.returncode == 0 and "sampled recording" in p.stderr and "raw samples" in p.stderr,
          "convert -f ljm of a sampled stream warns: %r" % p.stderr)
p = run([ljm, "report", std])
res.check(p.returncode == 0 and not p.stdout.startswith("SAMPLED"),
          "its downgrade reads as a standard stream")

# -- A sampled stream without its rate item ------------------------------------
with open(os.path.join(work, "s%d.ljm" % SEEDS[0]), "rb") as f:
    data = f.read()
at = data.find(b"ljm\x03\x0e\x00\x00\x30")  # TIME | SAMPLED | TYPES, then the rate item
at = at if at >= 0 else data.find(b"ljm\x03\x04\x00\x00\x30")
res.check(at > 0, "the event section starts with the SAMPLED flag and the rate item")
if at > 0:
    k = at + 8
    while data[k] & 0x80:
        k += 1
    cut = data[:at + 7] + data[k + 1:]
    bad = os.path.join(work, "norate.ljm")
    with open(bad, "wb") as f:
        f.write(cut)
    p = run([ljm, "report", bad])
    res.check(p.returncode != 0 and "byte %d" % (at + 7) in p.stderr and "rate" in p.stderr,
              "a sampled stream without its rate: an error at its byte: %r" % p.stderr)

# -- Regression checks: dead coroutines, walks, threads ------------------------
# A dead coroutine resumed: LuaJIT writes false into the frame's function
# slot before it allocates the message; no mode may read it as a function.
with open(os.path.join(work, "dead.lua"), "w") as f:
    f.write("local co = coroutine.create(function() return {} end)\n"
            "coroutine.resume(co)\nprint(coroutine.resume(co))\n")
for argv in ([], ["--stacks"], ["--sample", "1"], ["--sample", "1", "--stacks"]):
    p = run([record] + argv + ["-o", "dead.ljm", "dead.lua"])
    res.check(p.returncode == 0 and "cannot resume dead coroutine" in p.stdout,
              "resuming a dead coroutine under ljm record %s: exit %d %r" % (" ".join(argv), p.returncode,
                                                                           p.stderr[-300:]))
# One address handed back for the same size, sampled with odds near 0.63: the
# count estimate stays unbiased (a coin per event, not per address).
with open(os.path.join(work, "same_addr.lua"), "w") as f:
    f.write("local ffi = require('ffi')\n"
            "for i = 1, 3000 do local b = ffi.new('char[?]', 524288) b = nil collectgarbage() end\n")
counts = []
for seed in (1, 2, 3, 4):
    path = os.path.join(work, "same%d.ljm" % seed)
    run([record, "--sample", "512k", "--sample-seed", str(seed), "-o", path, "same_addr.lua"])
    doc = as_json(path)
    if doc:
        counts.append(sum(s["alloc_count"] for s in doc["sites"]
                          if s["alloc_bytes"] >= 100 * 524288))
res.check(counts and all(2400 <= c <= 3600 for c in counts) and
          2700 <= statistics.mean(counts) <= 3300,
          "3000 blocks of 512 KiB at one address: estimated counts %r" % counts)

# Two loadstring chunks "=A" and "=B" of the same code, each collected
# before the next: a prototype and its name may come back at the addresses
# the other chunk's had. Every mode must charge each chunk its own half
# (before, exact streams charged nearly all to the first; sampled stacks
# without walking afresh took frames from the last written event).
with open(os.path.join(work, "reuse.lua"), "w") as f:
    f.write("if jit then jit.off() end\n"
            "local src = 'local t = {} for i = 1, 2000 do t[i] = {i} end return t'\n"
            "for i = 1, 300 do\n"
            "  loadstring(src, '=' .. (i % 2 == 0 and 'A' or 'B'))()\n"
            "  collectgarbage()\n"
            "end\n")
for argv in ([], ["--stacks"], ["--sample", "16k", "--sample-seed", "5", "--stacks"]):
    path = os.path.join(work, "reuse.ljm")
    p = run([record] + argv + ["-o", path, "reuse.lua"])
    doc = as_json(path) if p.returncode == 0 else None
    by = {}
    if doc:
        for s_ in doc["sites"]:
            by[s_["name"]] = by.get(s_["name"], 0) + s_["alloc_bytes"]
    a, b = by.get("=A:1", 0), by.get("=B:1", 0)
    res.check(p.returncode == 0 and a + b > 20e6 and 0.4 <= a / (a + b) <= 0.6,
              "reused prototype addresses, ljm record %s: =A:1 %d bytes, =B:1 %d" % (" ".join(argv), a, b))
    if "--stacks" in argv:
        out = path + ".folded"
        run([ljm, "convert", "-o", out, path])
        fa = fb = 0
        if os.path.exists(out):
            for ln in open(out):
                stack, v = ln.rsplit(" ", 1)
                leaf = stack.rsplit(";", 1)[-1]
                fa += int(v) if leaf == "A:1" else 0
                fb += int(v) if leaf == "B:1" else 0
        res.check(fa + fb > 20e6 and 0.4 <= fa / (fa + fb) <= 0.6,
                  "reused prototype addresses, ljm record %s: stacks A:1 %d bytes, B:1 %d"
                  % (" ".join(argv), fa, fb))

# The flush interval holds while nothing is sampled: what the stream holds
# reaches the file before the script ends (SIGKILL), handed over by the
# unsampled allocations after the interval (at a stop: the recording has no
# thread, its countdown stops every 64 KiB to read the clock). The script
# prints the file's size well before the interval (1 s) ends and 0.5 s
# after 128 KiB allocated that follow it, and its age at the first.
with open(os.path.join(work, "idle.lua"), "w") as f:
    f.write("jit.off()\n"
            "local ffi = require('ffi')\n"
            "ffi.cdef[[int poll(void *f, unsigned long n, int t); int getpid(void); int kill(int p, int s);]]\n"
            "local function size() local f = assert(io.open(arg[1], 'rb')) local n = f:seek('end') f:close() return n end\n"
            "local keep = {}\n"
            "for i = 1, 1000 do keep[i] = {i} end\n"
            "ffi.C.poll(nil, 0, 200)\n"
            "local before = size()\n"
            "local stat = io.open('/proc/self/stat'):read('*a'):match('%) (.*)')\n"
            "local up = io.open('/proc/uptime'):read('*n')\n"
            "local fields = {} for w in stat:gmatch('%S+') do fields[#fields + 1] = w end\n"
            "local age = up - tonumber(fields[20]) / 100\n"  # starttime, in clock ticks
            "ffi.C.poll(nil, 0, 1000)\n"
            "keep[#keep + 1] = string.rep('x', 128 * 1024)\n"
            "ffi.C.poll(nil, 0, 500)\n"
            "print(before, size(), age)\n"
            "io.stdout:flush()\n"
            "if arg[2] == 'kill' then ffi.C.kill(ffi.C.getpid(), 9) end\n")


def idle_sizes(p):
    """(size before, size after, the process's age in s at 'before')."""
    try:
        b, a, age = p.stdout.split()
        return int(b), int(a), float(age)
    except ValueError:
        return 0, 0, 0.0


p = run([record, "--sample", "1G", "--sample-seed", "3", "-o", "idle0.ljm", "idle.lua", "idle0.ljm"])
b0, a0, _ = idle_sizes(p)
res.check(p.returncode == 0 and a0 == b0,
          "sampled, no flush interval: nothing more written while recording (%r)" % p.stdout)
# A process slower than the interval to reach its first size read (a loaded
# machine) may hand the buffer over before it: run again, at most thrice.
for _ in range(3):
    p = run([record, "--sample", "1G", "--sample-seed", "3", "--flush-interval", "1", "-o", "idle1.ljm",
             "idle.lua", "idle1.ljm", "kill"])
    b1, a1, age = idle_sizes(p)
    if age < 0.7:
        break
path = os.path.join(work, "idle1.ljm")
size = os.path.getsize(path) if os.path.exists(path) else 0
res.check(p.returncode == -9 and a1 > b1 and size == a1 and size > 1000,
          "sampled, --flush-interval 1, nothing sampled since: written while recording, kept after "
          "SIGKILL (%d %r, %d bytes)" % (p.returncode, p.stdout, size))
st = ljmread.parse(open(path, "rb").read()) if size else None
res.check(st is not None and not st.events,
          "idle, sampled at 1G: no event, so the stops handed the buffer over (%r)"
          % (st and len(st.events)))
# Stops change nothing about what is sampled (rec_unit_test proves it for
# the sampler alone): at 256 KiB a flush interval stops the countdown about
# four times per sampled byte, so stops taken for hits would write several
# times the events. The same seed with and without: nearly the same events
# (the VM's own allocations vary a little from run to run, so not exactly).
evs = {}
for name, argv in (("nostop", []), ("stops", ["--flush-interval", "86400"])):
    p = run([record, "--sample", "256k", "--sample-seed", "9", "--stacks"] + argv +
            ["-o", "same_%s.ljm" % name, "prog.lua"])
    st = ljmread.parse(open(os.path.join(work, "same_%s.ljm" % name), "rb").read())
    evs[name] = [e for e in st.events if e.ev == 1]
    res.check(p.returncode == 0 and st.complete and not st.problems,
              "same seed, %s: a valid stream (%r)" % (name, st.problems[:3]))
n0, n1 = len(evs["nostop"]), len(evs["stops"])
res.check(n0 > 100 and abs(n1 - n0) <= 0.1 * n0,
          "stops sample as many allocations as no stops (%d, %d)" % (n0, n1))
# A host that polls keeps the interval in time while it allocates too little
# for a stop: rec.is_running() hands the buffer over once the interval passed.
POLL = """local rec = require("ljm.recorder")
local ffi = require("ffi")
ffi.cdef[[int poll(void *f, unsigned long n, int t);]]
local function size() local f = assert(io.open("poll.ljm", "rb")) local n = f:seek("end") f:close() return n end
assert(rec.start("poll.ljm", {sample = 1073741824, seed = 3, flush = 0.2}))
local before = size()
ffi.C.poll(nil, 0, 300)
local mid = size()
local running = rec.is_running()
print(before, mid, size(), running)
assert(rec.stop())
"""
with open(os.path.join(work, "poll.lua"), "w") as f:
    f.write(POLL)
p = subprocess.run([testlib.LUAJIT, "poll.lua"], capture_output=True, text=True, cwd=work, timeout=120,
                   env=testlib.module_cpath(so, "sampling_poll_cpath"))
got = p.stdout.split()
res.check(p.returncode == 0 and len(got) == 4 and got[0] == got[1] and int(got[2]) > int(got[1])
          and got[3] == "true",
          "sampled, flush = 0.2, nothing allocated: is_running() after the interval writes the "
          "buffer (%r %r)" % (p.stdout, p.stderr[-300:]))
# A recording with a writer thread (exact; with time marks) of a host that
# polls and then makes no events: is_running() hands the buffered events
# over once the interval passed, and writes a time mark, so that the stream
# ends at the last poll. The process ends with _exit(), so the file holds
# only what was handed over; without the polls, nothing was. The script
# looks its C functions up before it starts: a first ffi.C.poll makes a
# cdata, an event that would hand the buffer over when it comes late.
IDLE = """local rec = require("ljm.recorder")
local ffi = require("ffi")
ffi.cdef[[int poll(void *f, unsigned long n, int t); void _exit(int);]]
local poll, exit, polls = ffi.C.poll, ffi.C._exit, arg[2] == "poll"  -- no allocation after
assert(rec.start(arg[1], {flush = 0.2, time = arg[3] == "time" or nil}))
local t = {}
for i = 1, 1000 do t[i] = {i} end
for _ = 1, 3 do
  poll(nil, 0, 250)
  if polls then rec.is_running() end
end
poll(nil, 0, 400)
exit(0)
"""
with open(os.path.join(work, "idle.lua"), "w") as f:
    f.write(IDLE)
idle = {}
for how in ("poll", "none"):
    for kind in ("exact", "time"):
        out = os.path.join(work, "idle_%s_%s.ljm" % (how, kind))
        p = subprocess.run([testlib.LUAJIT, "-joff", "idle.lua", out, how, kind], capture_output=True,
                           text=True, cwd=work, timeout=120,
                           env=testlib.module_cpath(so, "sampling_idle_cpath"))
        data = open(out, "rb").read() if os.path.exists(out) else b""
        try:
            st = ljmread.parse(data) if data else None
        except ljmread.Truncated:
            st = None
        allocs = sum(1 for e in st.events if e.ev == 1) if st else 0
        last_event = max((e.us for e in st.events if e.us is not None), default=0) if st else 0
        last_mark = st.marks[-1][1] if st and st.marks else 0
        idle[how, kind] = (allocs, last_mark - last_event)
        res.check(p.returncode == 0, "idle host, %s %s: ran (%d %r)" % (how, kind, p.returncode,
                                                                       p.stderr[-300:]))
for kind in ("exact", "time"):
    res.check(idle["poll", kind][0] >= 1000 and idle["none", kind][0] < 1000,
              "%s, flush = 0.2, idle: is_running() after the interval hands the events over "
              "(%d allocations in the file; without it %d)" % (kind, idle["poll", kind][0],
                                                             idle["none", kind][0]))
res.check(idle["poll", "time"][1] >= 400000,
          "time marks, idle: the polls' marks end the stream after the last event (%d us later)"
          % idle["poll", "time"][1])
# A sampled stream that cannot be written: the script runs, the tool says so
# (with a flush interval too).
for argv in (["--sample", "1k"], ["--sample", "1k", "--stacks"],
             ["--sample", "1G", "--flush-interval", "0.001"]):
    p = run([record] + argv + ["-o", "/dev/full", "prog.lua"])
    res.check(p.returncode == 1 and p.stderr.strip() == "ljm record: /dev/full: No space left on device",
              "ljm record %s -o /dev/full: exit 1 with the error (%d %r)" % (" ".join(argv), p.returncode,
                                                                             p.stderr[-300:]))

# An exact recording after a sampled one sees every event: after a stop,
# after a sampled stream failed (/dev/full), in a forked child of a live
# sampled recording; the same sites as with no sampled recording before.
SEQ = """local rec = require("ljm.recorder")
local ffi = require("ffi")
ffi.cdef[[int fork(void); int waitpid(int pid, int *st, int opt); void _exit(int st);]]
jit.off()
local function work()
  local t = {}
  for i = 1, 3000 do t[i] = {i} end
  t = nil
  collectgarbage() collectgarbage()
end
local mode, out = arg[1], arg[2]
if mode == "stop" then
  assert(rec.start("seq_s.ljm", {sample = 1024, seed = 1, stacks = true}))
  work()
  assert(rec.stop())
elseif mode == "full" then
  assert(rec.start("/dev/full", {sample = 1, seed = 1, stacks = true}))
  local s = {} for i = 1, 300000 do s[i % 100] = {i} end
  rec.stop()
elseif mode == "fork" then
  assert(rec.start("seq_s.ljm", {sample = 1024, seed = 1}))
  work()
  local pid = ffi.C.fork()
  if pid ~= 0 then ffi.C.waitpid(pid, nil, 0) rec.stop() return end
  rec.stop()
end
assert(rec.start(out))
work()
assert(rec.stop())
io.stdout:flush()
if mode == "fork" then ffi.C._exit(0) end
"""
with open(os.path.join(work, "seq.lua"), "w") as f:
    f.write(SEQ)
env = testlib.module_cpath(so, "sampling_seq_cpath")


def work_sites(mode):
    out = os.path.join(work, "seq_%s.ljm" % mode)
    p = subprocess.run([testlib.LUAJIT, "seq.lua", mode, out], capture_output=True, text=True,
                       env=env, timeout=120, cwd=work)
    doc = as_json(out) if p.returncode == 0 and os.path.exists(out) else None
    if not doc:
        res.check(False, "exact after sampled, %s: %d %r" % (mode, p.returncode, p.stderr[-300:]))
        return None
    return sorted((s_["name"], s_["alloc_count"], s_["alloc_bytes"], s_["free_count"], s_["free_bytes"])
                  for s_ in doc["sites"] if s_["name"].startswith("@seq.lua:"))


base = work_sites("none")
res.check(base and any(r[1] >= 3000 for r in base), "exact, no sampled recording before: %r" % base)
for mode in ("stop", "full", "fork"):
    got = work_sites(mode)
    res.check(got == base, "exact after sampled (%s): the same sites %r vs %r" % (mode, got, base))

# -- Options -------------------------------------------------------------------
for argv in (["--sample", "0"], ["--sample", "2G"], ["--sample", "abc"], ["--sample", "-5"],
             ["--sample-seed", "5"], ["--sample", "1k", "--sample-seed", "0"]):
    p = run([record] + argv + ["-o", "x.ljm", prog])
    res.check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1,
              "ljm record %s: a usage error (%d, %r)" % (" ".join(argv), p.returncode, p.stderr))

# The module: options, and a sampled recording runs alone.
MOD = r"""
local rec = require("ljm.recorder")
local dir = ...
local function expect_fail(what, ok, msg, code)
  if ok then error(what .. ": accepted") end
  print("refused", what, msg, code)
end
expect_fail("sample 0", rec.start(dir .. "/m0.ljm", {sample = 0}))
expect_fail("sample 2^31", rec.start(dir .. "/m1.ljm", {sample = 2^31}))
expect_fail("sample '12q'", rec.start(dir .. "/m2.ljm", {sample = "12q"}))
expect_fail("seed alone", rec.start(dir .. "/m3.ljm", {seed = 4}))
assert(rec.start(dir .. "/mod.ljm", {sample = "16k", seed = 5, stacks = true}))
local t = {}
for i = 1, 200000 do t[i] = {i} end
assert(rec.stop())
print("module ok")
"""
mod = os.path.join(work, "mod.lua")
with open(mod, "w") as f:
    f.write(MOD)
env = testlib.module_cpath(so, "sampling_cpath")
p = subprocess.run([testlib.LUAJIT, mod, work], capture_output=True, text=True, env=env,
                   timeout=120, cwd=work)
res.check(p.returncode == 0 and "module ok" in p.stdout, "module script: %s %s" % (p.stdout, p.stderr))
refusals = [ln for ln in p.stdout.splitlines() if ln.startswith("refused")]
res.check(len(refusals) == 4 and all(ln.endswith("\t22") for ln in refusals),
          "module refusals: EINVAL for bad options: %r" % refusals)

# Under ljm record --sample, the script's own recording is refused (EBUSY).
SECOND = """local ok, msg, code = misc.memprof.start("second.ljm")
print(ok, msg, code)
"""
with open(os.path.join(work, "second.lua"), "w") as f:
    f.write(SECOND)
p = run([record, "--sample", "64k", "-o", "whole.ljm", "second.lua"])
res.check(p.returncode == 0 and p.stdout.startswith("nil\t") and "sampled" in p.stdout
          and p.stdout.strip().endswith("\t16"),
          "misc.memprof.start beside a sampled recording: nil, message, EBUSY: %r" % p.stdout)
# Time in a sampled stream: no ticker thread (its 200 wake-ups a second
# cost a busy server more than the events), nor a writer (a second thread
# costs every system call and malloc), each written event reads the
# clock; the marks and RSS samples keep the exact stream's promises, a mark
# at least 5 ms apart. The exact run is short: only its threads are counted
# (stacks_test checks its marks).
nthreads = {}
for mode, argv, secs in (("exact", [], "0.2"), ("sampled", ["--sample", "4k", "--sample-seed", "5"], "1.0")):
    p = run([record, "--stacks"] + argv + ["-o", "busy_%s.ljm" % mode, busy, secs])
    res.check(p.returncode == 0, "busy, %s with stacks: exit %d %r" % (mode, p.returncode, p.stderr[-300:]))
    got = p.stdout.split()
    nthreads[mode] = int(got[1]) if len(got) > 1 and got[1].isdigit() else -1
res.check(nthreads["exact"] > 1 and nthreads["sampled"] == 1,
          "busy: a sampled recording to a file runs no thread of its own, neither ticker nor "
          "writer (%r)" % nthreads)
st = ljmread.parse(open(os.path.join(work, "busy_sampled.ljm"), "rb").read())
probs = ljmread.check_busy(st, min_gap_us=5000)
res.check(st.complete and not st.problems and not probs,
          "busy, sampled: a valid stream, a mark every 5 ms or more and RSS every 100 ms over a "
          "second: %s" % (st.problems or probs))
# Without a ticker, /proc/self/statm is opened at each start: closed at each stop.
# The open descriptors are counted in the process (fcntl): a child listing
# /proc/PID/fd races popen's closing of its pipe's other end.
CYCLES = """local ffi = require("ffi")
ffi.cdef"int fcntl(int fd, int cmd, ...);"
local rec = require("ljm.recorder")
local function nfd()
  local n = 0
  for fd = 0, 1023 do
    if ffi.C.fcntl(fd, 1) ~= -1 then n = n + 1 end  -- F_GETFD
  end
  return n
end
local before = nfd()
for i = 1, 20 do
  assert(rec.start("cycle.ljm", {sample = 4096, stacks = true, seed = i}))
  local t = {} for j = 1, 2000 do t[j] = {j} end
  assert(rec.stop())
end
print(before, nfd())
"""
with open(os.path.join(work, "cycles.lua"), "w") as f:
    f.write(CYCLES)
p = subprocess.run([testlib.LUAJIT, "cycles.lua"], capture_output=True, text=True, cwd=work, timeout=120,
                   env=testlib.module_cpath(so, "sampling_cycles_cpath"))
fds = p.stdout.split()
res.check(p.returncode == 0 and len(fds) == 2 and fds[0] == fds[1],
          "20 sampled recordings with stacks started and stopped: no descriptor left open (%r %r)"
          % (p.stdout, p.stderr[-300:]))

doc = as_json(os.path.join(work, "mod.ljm"))
if doc:
    res.check(doc["stream"]["sample_rate"] == RATE and doc["stream"]["stacks"],
              "module recording: sampled, with stacks")
    n = doc["totals"]["alloc_count"]
    res.check(120000 <= n <= 300000, "module recording: about 200000 tables estimated: %d" % n)
res.finish()
