#!/usr/bin/env python3
"""top_fates_test.py -- ljm top with filters by fate (--lifetime, --lived,
--site-leaked): each refresh reads the file anew and judges every block as
of the refresh's end.

testdata/top/grow.lua (leaky keeps every string, cached the last 500,
temp's tables are garbage at once) is recorded here with --stacks:

* A file that grows in two steps under ljm top (plain tables): first the
  first 40% of the complete recording, then the rest. The tables of the
  first step are --once's on that part (the same filter); the last one is
  the complete stream's, and says so. Under --lifetime leaked its growth
  since the first refresh compares figures judged alike: leaky's strings
  (--label type=string, never freed) grew by their bytes in use at the end
  less those at the first step, in the line's row and in the header; no
  row frees anything. Under --lifetime freed nothing is in use, ever.
* --once on the complete recording: --lifetime leaked holds what the
  tests' reader says is in use at the end, the rows add up to it;
  --lifetime temporary shows the lines report --lifetime temporary shows;
  --site-leaked 90 keeps leaky and leaves temp out; --lived 0s..1ms keeps
  no block in use for longer than the recording.
* In a real terminal (tmux) while the recording runs: the screen shows
  the lines, the filter in its header, and q quits with exit 0.
* A live recording under --lifetime leaked, refresh after refresh: GROWN
  >= LAST >= 0 and FREED/S 0 in every row. An empty file is waited for
  (with --lived too), then read; --once on a file with no events yet
  prints a table and a warning.
* Refused: standard input and a FIFO (exit 2), --lived on a recording
  without time marks (exit 1), a file that shrinks while it is followed
  (exit 1).

usage: top_fates_test.py LJM GROW_LUA"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import ljmread
from checks import Checks
from viewer_text import human

LJM = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
GROW = os.path.join(TMP, "grow.lua")
shutil.copy(sys.argv[2], GROW)
check = Checks("top_fates")


def run(args, **kw):
    kw.setdefault("timeout", 300)
    return subprocess.run(args, capture_output=True, cwd=TMP, **kw)


def tables(out):
    """The plain tables: a list of (header line, rows {name: fields}, the
    table's text, the rows' fields in order)."""
    got = []
    for block in out.strip().split("\n\n"):
        lines = block.splitlines()
        if not lines or "  at " not in lines[0]:
            continue
        rows, order = {}, []
        for ln in lines[1:]:
            m = re.match(r"^\s*([-\d.]+ [KMGTPE]?i?B)\s+(\d+)\s+([\d.]+ [KMGTPE]?i?B)\s+([\d.]+ [KMGTPE]?i?B)"
                         r"\s+([-+][\d.]+ [KMGTPE]?i?B)\s+([-+][\d.]+ [KMGTPE]?i?B)\s+(.*)$", ln)
            if m:
                rows[m.group(7)] = m.groups()[:6]
                order.append(m.groups()[:6])
        got.append((lines[0], rows, block, order))
    return got


def header_inuse(line):
    m = re.search(r"in use (\S+ \S+) in (\d+) blocks\s+grown (\S+ \S+) \(last (\S+ \S+)\)", line)
    return m.groups() if m else None


def once(*args):
    p = run([LJM, "top", "--once", "--top", "100000"] + list(args))
    check(p.returncode == 0, "top --once %s: exit %d %r" % (" ".join(args), p.returncode,
                                                              p.stderr[-300:]))
    t = tables(p.stdout.decode())
    return t[0] if t else ("", {}, "", [])


LEAKY = "leaky (grow.lua:7)"
TEMP = "temp (grow.lua:9)"

full = os.path.join(TMP, "full.ljm")
p = run([LJM, "record", "-joff", "--stacks", "-o", full, GROW, "2"])
check(p.returncode == 0, "record grow.lua: %r" % p.stderr[-300:])
with open(full, "rb") as fh:
    data = fh.read()
cut = len(data) * 2 // 5 + 7  # inside an event, most likely
part = os.path.join(TMP, "part.ljm")
with open(part, "wb") as fh:
    fh.write(data[:cut])


def follow(*filt):
    """ljm top on a file holding the first part, the rest written once a
    few refreshes read the first: its tables."""
    grows = os.path.join(TMP, "grows.ljm")
    with open(grows, "wb") as fh:
        fh.write(data[:cut])
    proc = subprocess.Popen([LJM, "top", "--interval", "0.2", "--top", "100000"] + list(filt) +
                            [grows], cwd=TMP, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()))
    reader.start()
    time.sleep(2.0)
    with open(grows, "ab") as fh:
        fh.write(data[cut:])
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
    reader.join()
    err = proc.stderr.read()
    check(proc.returncode == 0, "follow %s: exit %r %r" % (" ".join(filt), proc.returncode, err))
    return tables(out[0].decode() if out else "")


# -- A file that grows: judged as of each refresh -----------------------------
leaked = ("--lifetime", "leaked", "--label", "type=string")
tabs = follow(*leaked)
first_part = once(*(leaked + (part,)))
check(len(tabs) >= 3, "--lifetime leaked: tables while the file grows (%d)" % len(tabs))
if len(tabs) >= 3:
    early, last = tabs[0], tabs[-1]
    check("only blocks allocated under type=string" in early[0] and "still in use" in early[0],
          "the header says the filters: %r" % early[0])
    check(header_inuse(early[0])[:2] == header_inuse(first_part[0])[:2] and
          {k: v[:2] for k, v in early[1].items()} == {k: v[:2] for k, v in first_part[1].items()},
          "the first step's table is --once's on that part: %r / %r"
          % (early[0], first_part[0]))
    check("the recording ended (a complete stream)" in last[2],
          "the last table says the recording ended: %r" % last[2][:300])
    whole = once(*(leaked + (full,)))
    check(header_inuse(last[0])[:2] == header_inuse(whole[0])[:2],
          "the last table's in use is --once's on the whole file: %r / %r" % (last[0], whole[0]))
    # leaky's strings are never freed: in use at the end, less those at the first step
    lk_end = last[1].get(LEAKY)
    lk_first = first_part[1].get(LEAKY)
    if check(lk_end and lk_first, "leaky's row in both (%r, %r)" % (lk_end, lk_first)):
        def val(s):
            n, u = s.lstrip("+").split()
            return float(n) * 1024 ** ["B", "KiB", "MiB", "GiB"].index(u)
        want = val(lk_end[0]) - val(lk_first[0])
        got = val(lk_end[4])
        check(abs(got - want) <= 0.06 * 1024 + 0.0005 * abs(want),
              "leaky grew by its strings in use at the end less those at the first step: "
              "%r, want about %d" % (lk_end[4], want))
        check(lk_end[5] == lk_end[4], "since the last refresh (the first step's) as much: %r"
              % (lk_end,))
    frees = {k: v[3] for t in tabs for k, v in t[1].items() if v[3] != "0 B"}
    check(not frees, "--lifetime leaked: no row frees anything: %r" % frees)



def size_of(s):
    n, u = s.lstrip("+").split()
    sign = -1 if s[0] == "-" else 1
    return sign * float(n.lstrip("-")) * 1024 ** ["B", "KiB", "MiB", "GiB", "TiB", "PiB"].index(u)


# A recording followed while it is made, refresh after refresh: judged as of
# each, in use at the first refresh's place <= at the last one's <= now, so
# GROWN >= LAST >= 0, and nothing is freed (rows new since the first
# refresh start from nothing, not from an earlier reading's figures).
live = os.path.join(TMP, "live_leaked.ljm")
rec = subprocess.Popen([LJM, "record", "-joff", "--stacks", "--flush-interval", "0.3", "-o", live,
                        GROW, "4"], cwd=TMP, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
time.sleep(0.8)
p = run([LJM, "top", "--lifetime", "leaked", "--interval", "0.3", "--top", "100000", live],
        timeout=120)
rec.wait(timeout=60)
tabs = tables(p.stdout.decode())
bad = []
for t in tabs:
    head = (header_inuse(t[0]) or ("", "", "-1 B", "-1 B"))[2:]
    for name, v in list(t[1].items()) + [("(header)", ("", "", "0 B", "0 B") + tuple(head))]:
        grown, last = size_of(v[4]), size_of(v[5])
        if v[3] != "0 B" or not grown >= last >= 0:
            bad.append((name, v))
check(p.returncode == 0 and len(tabs) >= 4 and not bad,
      "a live recording under --lifetime leaked: %d tables, rows freeing or shrinking: %r (exit "
      "%d %r)" % (len(tabs), bad[:4], p.returncode, p.stderr[-200:]))

# A file that holds nothing yet: ljm top waits for it (then the stream,
# --lived included: its time marks come with it); --once does not wait.
empty = os.path.join(TMP, "empty.ljm")
open(empty, "wb").close()
proc = subprocess.Popen([LJM, "top", "--interval", "0.2", "--lived", "0s..", empty], cwd=TMP,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
time.sleep(1.0)
with open(empty, "ab") as fh:
    fh.write(data[:3])
    fh.flush()
    time.sleep(0.6)
    fh.write(data[3:])
out, err = proc.communicate(timeout=60)
last = tables(out.decode())
check(proc.returncode == 0 and last and "the recording ended" in last[-1][2] and
      header_inuse(last[-1][0])[:2] == header_inuse(once("--lived", "0s..", full)[0])[:2],
      "an empty file, then the stream: waited, then the whole stream's table (exit %d %r)"
      % (proc.returncode, err[-300:]))
head = os.path.join(TMP, "head.ljm")
with open(head, "wb") as fh:
    fh.write(data[:40])
p = run([LJM, "top", "--once", "--lifetime", "leaked", head], timeout=30)
check(p.returncode == 0 and b"warning" in p.stderr and "  at " in p.stdout.decode(),
      "--once on a file with no events yet: a table and a warning, exit 0 (%d %r)"
      % (p.returncode, p.stderr))

tabs = follow("--lifetime", "freed")
check(len(tabs) >= 3 and all(header_inuse(t[0]) and header_inuse(t[0])[:2] == ("0 B", "0")
                             for t in tabs) and
      all(v[0] == "0 B" for t in tabs for v in t[1].values()),
      "--lifetime freed: nothing in use in any table (%r)" % [t[0][:120] for t in tabs[:3]])
check(any(v[2] != "0 B" for t in tabs[1:] for v in t[1].values()),
      "--lifetime freed: allocation rates after the first refresh")

# -- --once on the complete recording ---------------------------------------------
want = ljmread.totals(data)
h, rows, _, order = once("--lifetime", "leaked", full)
check(header_inuse(h) and header_inuse(h)[:2] == (human(want["inuse_bytes"]), str(want["inuse_count"])),
      "--once --lifetime leaked: in use %r, the reader's %d in %d" % (header_inuse(h),
                                                                      want["inuse_bytes"],
                                                                      want["inuse_count"]))
check(sum(int(v[1]) for v in order) == want["inuse_count"],
      "--once --lifetime leaked: the rows' blocks add up to the reader's %d" % want["inuse_count"])
h, rows, _, _ = once("--lifetime", "temporary", full)
doc = json.loads(run([LJM, "convert", "-q", "-f", "json", "--lifetime", "temporary", "-o", "-",
                      full]).stdout or b"{}")


def row_name(x):
    """A JSON site as ljm top names its line."""
    if x["kind"] == "c":
        return "%s [C]" % x["func"]
    if x["kind"] == "lua":
        return "%s (%s:%d)" % (x["func"], os.path.basename(x["file"]), x["line"])
    return x["name"]


made = {row_name(x) for x in doc.get("sites", []) if x["alloc_count"]}
check(TEMP in rows and made <= set(rows) and
      all(v[2] == "0 B" for k, v in rows.items() if k not in made),
      "--lifetime temporary: the lines that allocate are report's JSON's (%r, %r)"
      % (sorted(rows), sorted(made)))
check(all(v[0] == "0 B" for v in rows.values()), "--lifetime temporary: nothing in use")
h, rows, _, _ = once("--site-leaked", "90", full)
check(LEAKY in rows and TEMP not in rows,
      "--site-leaked 90: leaky kept, temp left out (%r)" % sorted(rows))
h, rows, _, _ = once("--lived", "0s..1ms", full)
check(all(v[0] == "0 B" for v in rows.values()) and TEMP in rows,
      "--lived 0s..1ms: temp's short lives, nothing in use (%r)" % sorted(rows)[:8])

# -- In a real terminal ------------------------------------------------------------
sockdir = tempfile.mkdtemp(prefix="ljmtopf", dir="/tmp")
sock = os.path.join(sockdir, "s")


def tmux(*args):
    return subprocess.run(["tmux", "-S", sock] + list(args), capture_output=True, text=True,
                          timeout=30)


try:
    live = os.path.join(TMP, "live.ljm")
    rec = subprocess.Popen([LJM, "record", "-joff", "--stacks", "--flush-interval", "0.3", "-o",
                            live, GROW, "4"], cwd=TMP, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
    time.sleep(1.0)
    done = os.path.join(TMP, "done")
    tmux("new-session", "-d", "-s", "t", "-x", "150", "-y", "40",
         "cd %s && %s top --lifetime leaked live.ljm; echo EXIT=$? > %s; sleep 60"
         % (TMP, LJM, done))
    s = ""
    end = time.time() + 20
    while time.time() < end:
        s = tmux("capture-pane", "-p", "-t", "t").stdout
        if LEAKY in s and "[lines by in use]" in s:
            break
        time.sleep(0.2)
    check(LEAKY in s and "still in use" in s,
          "screen: leaky's line and the filter in the header:\n%s" % s)
    tmux("send-keys", "-t", "t", "q")
    end = time.time() + 10
    while time.time() < end and not os.path.exists(done):
        time.sleep(0.2)
    time.sleep(0.3)
    after = open(done).read() if os.path.exists(done) else ""
    check(after.startswith("EXIT=0"), "screen: q exits 0 (%r)" % after)
    rec.wait(timeout=120)
finally:
    tmux("kill-server")
    shutil.rmtree(sockdir, True)

# -- Refused -----------------------------------------------------------------------
fifo = os.path.join(TMP, "fifo")
os.mkfifo(fifo)
p = run([LJM, "top", "--lifetime", "leaked", fifo], timeout=30)
check(p.returncode == 2 and b"give a file, not a pipe" in p.stderr,
      "a FIFO: refused (%d %r)" % (p.returncode, p.stderr))
with open(full, "rb") as fh:
    p = run([LJM, "top", "--lifetime", "leaked", "-"], stdin=fh)
check(p.returncode == 2 and b"give a file, not '-'" in p.stderr and
      len(p.stderr.splitlines()) == 1, "standard input: %d %r" % (p.returncode, p.stderr))
untimed = os.path.join(TMP, "untimed.ljm")
run([LJM, "record", "-joff", "-o", untimed, GROW, "1"])
p = run([LJM, "top", "--once", "--lived", "1s..", untimed])
check(p.returncode == 1 and b"no time marks" in p.stderr and not p.stdout,
      "--lived without time: %d %r" % (p.returncode, p.stderr))
shrinks = os.path.join(TMP, "shrinks.ljm")
with open(shrinks, "wb") as fh:
    fh.write(data[:cut])
proc = subprocess.Popen([LJM, "top", "--interval", "0.2", "--lifetime", "leaked", shrinks],
                        cwd=TMP, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
time.sleep(1.5)
with open(shrinks, "r+b") as fh:
    fh.truncate(cut // 2)
try:
    out, err = proc.communicate(timeout=30)
except subprocess.TimeoutExpired:
    proc.kill()
    out, err = proc.communicate()
check(proc.returncode == 1 and b"shrank" in err and len(err.splitlines()) == 1,
      "a file that shrinks: one line, exit 1 (%r %r)" % (proc.returncode, err))

sys.exit(check.done(minimum=20))
