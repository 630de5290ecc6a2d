#!/usr/bin/env python3
"""growth_test.py -- `ljm growth` on recordings of a Lua program whose memory
behaviour is known, made here with `ljm record` (JIT off):

* server.lua serves "requests" for a few seconds: leak() keeps ~100 bytes a
  request for ever (line 5), cached() fills a 2000-item cache in the first
  second and then only replaces, clean() makes temporaries. Exact and
  sampled (one byte in 16 KiB, a fixed seed), each with stacks and without
  (exact --time; sampled streams have time marks): line 5 is listed, first
  and alone, its stack under leak() where there are stacks; its slope is
  within 10% (exact) and 20% (sampled) of the truth, the bytes line 5 holds
  at the end (ljm report's heap summary) over the seconds the program ran.
  The same from stdin ("-").
* idle.lua allocates, then sleeps: the stream's last time mark is at its end.
* levels.lua grows for the first 40% of its time, then holds, and makes
  garbage the collector frees every few steps: nothing listed.
* A recording without time marks (standard): one line saying so and
  suggesting --time, exit 1, nothing on stdout.
* A cut stream: analysed up to the cut, with a one-line warning, exit 0.
* --fail-above below the slope exits 3, above it 0; --json; --top; --skip
  past the end (too short: exit 1); usage errors (exit 2); a heap snapshot
  refused; every corpus stream: exit 0 or 1, one line on stderr at most.

usage: growth_test.py LJM TESTDATA"""
import json
import os
import re
import subprocess
import sys
import tempfile

import ljmread
from checks import Checks

LJM = os.path.abspath(sys.argv[1])
DATA = os.path.abspath(sys.argv[2])
TMP = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
check = Checks("growth")

SERVER = r"""local ffi = require("ffi")
local secs = tonumber(arg[1])
local kept = {}
local function leak(i)
  kept[#kept + 1] = {i, i + 1}      -- line 5: about 100 bytes a request, kept
end
local cache, order, cap = {}, {}, 2000
local function cached(i)
  local k = i % 5000
  if not cache[k] then
    if #order >= cap then cache[table.remove(order, 1)] = nil end
    cache[k] = {k}                  -- fills to cap, then replaces
    order[#order + 1] = k
  end
  return cache[k]
end
local function clean(i)
  local t = {}
  for j = 1, 10 do t[j] = tostring(i * j) end
  return table.concat(t, ",")
end
ffi.cdef [[
int usleep(unsigned int);
struct ts { long s, ns; };
int clock_gettime(int, struct ts *);
]]
local ts = ffi.new("struct ts")
local function now() ffi.C.clock_gettime(1, ts) return tonumber(ts.s) + tonumber(ts.ns) / 1e9 end
-- 50 requests every 5 ms on the clock: every run serves the same requests
local t0, i = now(), 0
for tick = 1, secs * 200 do
  for _ = 1, 50 do
    i = i + 1
    leak(i)
    cached(i)
    clean(i)
  end
  local wait = t0 + tick * 0.005 - now()
  if wait > 0 then ffi.C.usleep(wait * 1e6) end
end
print(string.format("ran %.3f s, %d requests", now() - t0, i))
"""

LEVELS = r"""local ffi = require("ffi")
ffi.cdef "int usleep(unsigned int);"
local kept = {}
for step = 1, 500 do
  if step <= 200 then
    for _ = 1, 40 do kept[#kept + 1] = {step} end   -- line 6: grows, then stops
  end
  local tmp = {}  -- garbage enough for a collection every few steps
  for j = 1, 2000 do tmp[j] = {j} end
  ffi.C.usleep(10000)
end
"""

IDLE = r"""local ffi = require("ffi")
ffi.cdef "int usleep(unsigned int);"
local kept = {}
for i = 1, 1000 do kept[i] = {i} end
ffi.C.usleep(1500000)
"""


def path(name):
    return os.path.join(TMP, name)


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)


def record(name, script, args, opts):
    """Records script under ljm record -joff; (stream, seconds it ran or None)."""
    out = path(name)
    p = run([LJM, "record", "-joff", "-o", out] + opts + [path(script)] + args, cwd=TMP)
    check(p.returncode == 0, "record %s: exit 0 (%r)" % (name, p.stderr[-300:]))
    m = re.search(r"ran ([\d.]+) s", p.stdout)
    return out, float(m.group(1)) if m else None


def growth(args):
    return run([LJM, "growth"] + args)


def held_at(stream, line):
    """Bytes ljm report's heap summary says a line of server.lua holds."""
    p = run([LJM, "report", "--leak-only", stream])
    m = re.search(r"^@%s:%d holds (\d+)B:" % (re.escape(path("server.lua")), line), p.stdout, re.M)
    return int(m.group(1)) if m else None


def one_line(p):
    return p.stderr.count("\n") == 1


for name, text in (("server.lua", SERVER), ("levels.lua", LEVELS), ("idle.lua", IDLE)):
    open(path(name), "w").write(text)

# -- A leak, a cache, temporaries: exact and sampled -----------------------
exact, secs = record("exact.ljm", "server.lua", ["6"], ["--stacks"])
truth = held_at(exact, 5)
check(truth and secs and truth > 1e6, "the truth: line 5 holds %s bytes after %s s" % (truth, secs))
sampled, _ = record("sampled.ljm", "server.lua", ["6"], ["--stacks", "--sample", "16k",
                                                       "--sample-seed", "7"])
timed, _ = record("time.ljm", "server.lua", ["6"], ["--time"])
plain, _ = record("sampled-nostacks.ljm", "server.lua", ["6"], ["--sample", "16k",
                                                              "--sample-seed", "7"])
for stream, tolerance, with_stacks in ((exact, 0.10, True), (sampled, 0.20, True),
                                       (timed, 0.10, False), (plain, 0.20, False)):
    tag = os.path.basename(stream)
    p = growth(["--json", stream])
    check(p.returncode == 0 and p.stderr == "", "%s: exit 0, nothing on stderr (%s, %r)"
          % (tag, p.returncode, p.stderr))
    try:
        g = json.loads(p.stdout)
    except ValueError:
        check(False, "%s: --json is JSON (%r)" % (tag, p.stdout[:200]))
        continue
    lines = [(l["file"], l["line_number"]) for l in g["lines"]]
    check(lines == [(path("server.lua"), 5)], "%s: line 5 listed, alone (%s)" % (tag, lines))
    if g["lines"] and truth and secs:
        rate = truth / secs
        slope = g["lines"][0]["bytes_per_s"]
        check(abs(slope - rate) <= tolerance * rate, "%s: slope %.0f B/s within %d%% of %.0f B/s"
              % (tag, slope, tolerance * 100, rate))
        check(abs(g["lines"][0]["bytes_per_hour"] - 3600 * slope) <= 0.001 * 3600 * slope + 1,
              "%s: per hour is 3600 x per second" % tag)
        check(g["lines"][0]["steady"] >= 0.9, "%s: steady (%s)" % (tag, g["lines"][0]["steady"]))
        check(abs(g["lines"][0]["in_use"] - truth) <= tolerance * truth,
              "%s: in use now %d, truth %d" % (tag, g["lines"][0]["in_use"], truth))
    stacks = g["stacks"]
    # 32 buckets at most, doubling in width: between 16 and 32 points,
    # whatever the run's length (6.4 s makes 17 of 0.4 s).
    check(g["to_s"] >= 5 and 16 <= g["points"] <= 32, "%s: the whole run analysed (%s s, %s points)"
          % (tag, g["to_s"], g["points"]))
    if not with_stacks:
        check(stacks == [] and g["stacks_total"] == 0, "%s: no stacks, none listed" % tag)
        continue
    check(stacks and stacks[0]["frames"][0].endswith("server.lua:5") and
          any(f.startswith("leak ") for f in stacks[0]["frames"]),
          "%s: the first stack is line 5 in leak() (%s)" % (tag, stacks[0]["frames"] if stacks else None))
    check(not [s for s in stacks if any("cached" in f or "clean" in f for f in s["frames"])],
          "%s: nothing under cached() or clean()" % tag)

# From stdin: the same analysis.
with open(timed, "rb") as f:
    p = run([LJM, "growth", "--json", "-"], stdin=f)
q = growth(["--json", timed])
check(p.returncode == 0 and p.stdout.replace('"file": "-"', '"file": "%s"' % timed) == q.stdout,
      "stdin: the same JSON as the file (%s, %r)" % (p.returncode, p.stderr))

# The last time mark is at the stream's end, after 1.5 s of sleep.
idle, _ = record("idle.ljm", "idle.lua", [], ["--time"])
st = ljmread.parse(open(idle, "rb").read())
check(st.complete and st.flags == 2 | ljmread.TYPES and not st.nodes and st.marks and st.marks[-1][1] >= 1400000,
      "idle.ljm: flags TIME, no stack nodes, the last mark at the end (%s, %#x, %s)"
      % (st.complete, st.flags, st.marks[-1][1] if st.marks else None))

# The text view of the exact stream: the table and the stack.
p = growth([exact])
check(p.returncode == 0 and re.search(r"^Steady growth by line \(1;", p.stdout, re.M) and
      re.search(r"/s .*/h .*%.*server\.lua:5\)$", p.stdout, re.M) and
      re.search(r"^#1 .*/s \(.*/h\), steady \d+%, .* in use now, since 0\.0 s\n    server\.lua:5\n", p.stdout,
                re.M),
      "text: the line's row and its stack (%r)" % p.stdout)
rate = truth / secs if truth and secs else 1000
p = growth(["--fail-above", "%dB/s" % (rate / 2), exact])
check(p.returncode == 3 and one_line(p) and "faster than --fail-above" in p.stderr and
      "server.lua:5" in p.stdout, "--fail-above half the slope: exit 3, the report and one line (%s, %r)"
      % (p.returncode, p.stderr))
p = growth(["--fail-above", "%dk/min" % (rate * 2 * 60 / 1024), exact])
check(p.returncode == 0, "--fail-above twice the slope (per minute): exit 0 (%s, %r)"
      % (p.returncode, p.stderr))
p = growth(["--fail-above", "%dGB/h" % (rate * 2 * 3600 / 1024 ** 3 + 1), "--skip", "1s", "--top", "1",
            exact])
check(p.returncode == 0 and p.stdout.count("server.lua:5") == 2,
      "--fail-above in GB/h, --skip 1s, --top 1: exit 0, one line and one stack (%s)" % p.returncode)

# -- Growth that levels off ------------------------------------------------
levels, _ = record("levels.ljm", "levels.lua", [], ["--stacks"])
p = growth([levels])
check(p.returncode == 0 and "No steady growth" in p.stdout and "levels.lua:6" not in p.stdout,
      "levels off: nothing listed (%s, %r)" % (p.returncode, p.stdout))
p = growth(["--json", levels])
check(p.returncode == 0 and json.loads(p.stdout)["lines"] == [], "levels off: --json lists nothing")

# -- No time marks -----------------------------------------------------------
standard, _ = record("standard.ljm", "server.lua", ["1"], [])
p = growth([standard])
check(p.returncode == 1 and one_line(p) and "no time marks" in p.stderr and
      "--time" in p.stderr and p.stdout == "",
      "standard.ljm: one line, no time marks, --time suggested, exit 1 (%s, %r, %r)"
      % (p.returncode, p.stderr, p.stdout))

# -- A cut stream --------------------------------------------------------------
data = open(exact, "rb").read()
open(path("cut.ljm"), "wb").write(data[:len(data) * 7 // 10])
p = growth(["--json", path("cut.ljm")])
check(p.returncode == 0 and one_line(p) and "warning" in p.stderr and
      [l["line_number"] for l in json.loads(p.stdout or "{}").get("lines", [])] == [5],
      "cut stream: a one-line warning, analysed up to the cut (%s, %r)" % (p.returncode, p.stderr))
p = growth(["--strict", path("cut.ljm")])
check(p.returncode == 1 and one_line(p), "cut stream, --strict: exit 1, one line (%r)" % p.stderr)

# -- Too short, usage errors, other inputs -----------------------------------
p = growth(["--skip", "1h", exact])
check(p.returncode == 1 and one_line(p) and "too short" in p.stderr and p.stdout == "",
      "--skip past the end: too short, exit 1 (%s, %r)" % (p.returncode, p.stderr))
snap = path("snap.ljh")
p = run([LJM, "record", "-joff", "-o", path("x.ljm"), "--snapshot-at-exit", snap,
         path("levels.lua")], cwd=TMP)
check(p.returncode == 0, "a heap snapshot recorded (%r)" % p.stderr[-200:])
for args, what in ((["--skip", "soon", exact], "--skip"), (["--skip", "-1", exact], "--skip"),
                   (["--fail-above", "fast", exact], "--fail-above"),
                   (["--fail-above", "10KB/day", exact], "--fail-above"),
                   (["--fail-above", "0", exact], "--fail-above"),
                   (["--top", "0", exact], "--top"), (["--bogus", exact], "bogus"),
                   ([], "missing"), ([exact, exact], "extra"), ([snap], "heap snapshot")):
    p = growth(args)
    check(p.returncode == 2 and one_line(p) and what in p.stderr and p.stdout == "",
          "ljm growth %s: usage error naming %s (%s, %r)" % (" ".join(args), what, p.returncode, p.stderr))
p = growth([path("missing.ljm")])
check(p.returncode == 1 and one_line(p), "missing file: exit 1, one line (%r)" % p.stderr)
p = growth(["--help"])
check(p.returncode == 0 and p.stdout.startswith("usage: ljm growth"), "--help")

ran = 0
for sub in ("v3", "ext", "synthetic", "cli"):
    d = os.path.join(DATA, sub)
    for f in sorted(os.listdir(d)):
        if not f.endswith((".ljm", ".gz", ".zst")):
            continue
        p = growth([os.path.join(d, f)])
        ran += 1
        check(p.returncode in (0, 1) and p.stderr.count("\n") <= 2 and
              (p.returncode == 0 or p.stderr.endswith("\n")),
              "corpus %s/%s: exit 0 or 1, a line or two on stderr (%s, %r)"
              % (sub, f, p.returncode, p.stderr[-300:]))
check(ran >= 20, "corpus streams tried (%d)" % ran)

sys.exit(check.done(minimum=40))
