#!/usr/bin/env python3
"""top_test.py -- ljm top on recordings still being written.

testdata/top/grow.lua (leaky keeps every string, cached the last 500,
temp's tables are garbage at once) is recorded here while ljm top watches:

* In a real terminal (tmux, 150x40): the screen shows the header, the
  history of in use and RSS, and the lines by in use, leaky's first; 'v'
  shows the call stacks (leaky's innermost frame first), 'g' orders by
  growth, 'p' pauses and resumes, 'q' quits with exit 0 and the terminal
  as it was (stty: canonical, echo). After the recording ends the screen
  says so and its figures are the complete stream's, as the tests' own
  reader replays it (in use, peak).
* Not on a terminal: a plain table per interval, time moving on and
  leaky's bytes in use growing, and the last one says the recording ended.
* Through a FIFO (a pipe), and a file written in pieces cut in the middle
  of events: ljm top waits for the rest, and its last table is --once's
  on the whole file.
* --once: in use, blocks and peak are the reader's; --by plugin on a
  labelled recording (testdata/labels/plugins.lua) gives each value the
  bytes in use `ljm report --by plugin` gives it; a sampled recording
  says its figures are estimates.
* Refused in one line, exit 1: not a stream (also on a terminal, which is
  restored), compressed data on a pipe, a pipe that closes mid-stream,
  a file that shrinks or is replaced while followed; a heap snapshot and
  bad options are usage errors (2).
* Ends: a pipe kept open after the end marker ends at the marker; a .gz
  file followed while still empty is read once its header comes; a zstd
  file written in pieces cut inside its blocks is followed to its end; a
  signal while waiting exits 0 quietly; a complete file's tables show
  nothing grown; --once on a cut stream prints its table and a warning.

usage: top_test.py LJM GROW_LUA PLUGINS_LUA"""
import atexit
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
PLUGINS = os.path.join(TMP, "plugins.lua")
shutil.copy(sys.argv[2], GROW)
shutil.copy(sys.argv[3], PLUGINS)
check = Checks("top")
SOCKDIR = tempfile.mkdtemp(prefix="ljmtop", dir="/tmp")
atexit.register(shutil.rmtree, SOCKDIR, True)
SOCK = os.path.join(SOCKDIR, "s")
# tmux servers end with the test, whatever happens
atexit.register(lambda: subprocess.run(["tmux", "-S", SOCK, "kill-server"], capture_output=True))


def run(args, **kw):
    kw.setdefault("timeout", 300)
    return subprocess.run(args, capture_output=True, cwd=TMP, **kw)


def record_bg(out, seconds, opts=("--stacks",), script=None):
    return subprocess.Popen([LJM, "record", "-joff", "--flush-interval", "0.3", "-o", out] +
                            list(opts) + [script or GROW, str(seconds)], cwd=TMP,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def tmux(*args):
    return subprocess.run(["tmux", "-S", SOCK] + list(args), capture_output=True, text=True,
                          timeout=30)


def new_session(cmd):
    """A fresh tmux server of its own (socket) with one 150x40 pane."""
    global SOCK
    tmux("kill-server")
    # a socket's path has at most 107 bytes: Bazel's temporary folder is deeper
    SOCK = os.path.join(SOCKDIR, "s%d" % time.monotonic_ns())
    p = tmux("new-session", "-d", "-s", "t", "-x", "150", "-y", "40", cmd)
    check(p.returncode == 0, "tmux new-session: %r" % p.stderr)


def screen():
    return tmux("capture-pane", "-p", "-t", "t").stdout


def wait_for(pred, secs):
    end = time.time() + secs
    while time.time() < end:
        s = screen()
        if pred(s):
            return s
        time.sleep(0.2)
    return screen()


def header_of(text):
    m = re.search(r"in use (\S+ \S+) in (\d+) blocks .* peak (\S+ \S+)", text)
    return m.groups() if m else None


# -- In a real terminal ------------------------------------------------------
live = os.path.join(TMP, "live.ljm")
rec = record_bg(live, 6)
time.sleep(1.0)
done = os.path.join(TMP, "done")
new_session("cd %s && %s top live.ljm; echo EXIT=$? > %s; stty -a >> %s; sleep 60"
            % (TMP, LJM, done, done))
s = wait_for(lambda s: "leaky (grow.lua:7)" in s and "[lines by in use]" in s, 20)
rows = [ln for ln in s.splitlines() if re.match(r"^\s+[\d.]+ [KMG]?i?B\s+\d+", ln)]
check(rows and "leaky (grow.lua:7)" in rows[0],
      "screen: leaky's line holds the most, first (%r); the screen:\n%s" % (rows[:3], s))
check(re.search(r"^in use\s+\S+ \S+\s+[\u2581-\u2588 ]+", s, re.M) is not None and
      re.search(r"^RSS\s+\S+ \S+\s+[\u2581-\u2588 ]+", s, re.M) is not None,
      "screen: the history of in use and RSS as sparklines:\n%s" % s)
tmux("send-keys", "-t", "t", "v")
s = wait_for(lambda s: "[stacks by in use]" in s, 5)
check(re.search(r"grow\.lua:7 < leaky \(grow\.lua\) < main chunk", s) is not None,
      "screen 'v': the stacks, innermost first:\n%s" % s)
tmux("send-keys", "-t", "t", "g")
s = wait_for(lambda s: "[stacks by growth]" in s, 5)
check("[stacks by growth]" in s, "screen 'g': by growth")
tmux("send-keys", "-t", "t", "p")
s = wait_for(lambda s: "PAUSED" in s, 5)
frozen = header_of(s)
time.sleep(1.5)
check("PAUSED" in s and frozen and header_of(screen()) == frozen,
      "screen 'p': paused, the figures stay (%r)" % (frozen,))
tmux("send-keys", "-t", "t", "p")
s = wait_for(lambda s: "PAUSED" not in s and header_of(s) != frozen, 5)
check(header_of(s) != frozen, "screen 'p' again: refreshing again")
rec.wait(timeout=120)
s = wait_for(lambda s: "the recording ended" in s, 15)
check("the recording ended" in s, "screen: the end of the recording is said:\n%s" % s)
with open(live, "rb") as fh:
    want = ljmread.totals(fh.read())
got = header_of(s)
check(got == (human(want["inuse_bytes"]), str(want["inuse_count"]), human(want["peak_bytes"])),
      "screen at the end: in use, blocks and peak %r, the reader's %r" %
      (got, (human(want["inuse_bytes"]), want["inuse_count"], human(want["peak_bytes"]))))
tmux("send-keys", "-t", "t", "q")
end = time.time() + 10
while time.time() < end and not os.path.exists(done):
    time.sleep(0.2)
time.sleep(0.3)
after = open(done).read() if os.path.exists(done) else ""
check(after.startswith("EXIT=0"), "q: exit 0 (%r)" % after[:20])
check(re.search(r"(?<!-)icanon", after) and re.search(r"(?<![-\w])echo\b", after),
      "q: the terminal is restored (canonical, echo): %r" % after[:300])

# Not a stream, on a terminal: one line, exit 1, the terminal restored.
bad = os.path.join(TMP, "bad.ljm")
with open(bad, "w") as fh:
    fh.write("not a profile\n")
if os.path.exists(done):
    os.remove(done)
new_session("cd %s && %s top bad.ljm 2> %s.err; echo EXIT=$? > %s; stty -a >> %s; sleep 60"
            % (TMP, LJM, done, done, done))
end = time.time() + 10
while time.time() < end and not os.path.exists(done):
    time.sleep(0.2)
time.sleep(0.3)
after = open(done).read() if os.path.exists(done) else ""
err = open(done + ".err").read() if os.path.exists(done + ".err") else ""
check(after.startswith("EXIT=1") and "icanon" in after and "-icanon" not in after,
      "not a stream on a terminal: exit 1, terminal restored (%r)" % after[:80])
check(len(err.strip().splitlines()) == 1 and "not an ljm profile" in err,
      "not a stream: one line (%r)" % err)
tmux("kill-server")

# -- Not on a terminal: a table per interval -----------------------------------
plain = os.path.join(TMP, "plain.ljm")
rec = record_bg(plain, 3)
time.sleep(0.8)
p = run([LJM, "top", "--interval", "0.5", plain], timeout=120)
rec.wait(timeout=60)
out = p.stdout.decode()
times = [float(x) for x in re.findall(r"  at ([\d.]+) s  in use", out)]
leaky = [ln for ln in out.splitlines() if ln.endswith("leaky (grow.lua:7)")]
check(p.returncode == 0 and len(times) >= 3 and times == sorted(times) and times[0] < times[-1],
      "plain: tables at times moving on (%r, exit %d %r)" % (times, p.returncode, p.stderr[-200:]))
sizes = [ln.split()[0:2] for ln in leaky]
check(len(leaky) >= 3 and leaky[0] != leaky[-1], "plain: leaky's row changes (%r)" % sizes)
check("the recording ended (a complete stream)" in out.split("\n\n")[-2],
      "plain: the last table says the recording ended")
once = run([LJM, "top", "--once", plain]).stdout.decode()
last = out.strip().split("\n\n")[-1].splitlines()
check(header_of(last[0]) == header_of(once.splitlines()[0]),
      "plain: the last table's header is --once's (%r, %r)" % (last[0], once.splitlines()[0]))

# -- --once against the reader -------------------------------------------------
with open(plain, "rb") as fh:
    want = ljmread.totals(fh.read())
got = header_of(once)
check(got == (human(want["inuse_bytes"]), str(want["inuse_count"]), human(want["peak_bytes"])),
      "--once: in use, blocks, peak %r; the reader's %r" % (got, want["inuse_bytes"]))
blocks = sum(int(m.group(1)) for m in re.finditer(r"^\s+\S+ \S+\s+(\d+) ", once, re.M))
p = run([LJM, "top", "--once", "--top", "100000", plain])
blocks = sum(int(m.group(1)) for m in re.finditer(r"^\s+[-\d.]+ [KMG]?i?B\s+(\d+) ",
                                                    p.stdout.decode(), re.M))
check(blocks == want["inuse_count"], "--once --top all: the rows' blocks add up to the reader's "
      "%d (%d)" % (want["inuse_count"], blocks))

# Labels: a value's bytes in use are report --by's.
labelled = os.path.join(TMP, "plugins.ljm")
p = run([LJM, "record", "-joff", "--time", "-o", labelled, PLUGINS])
if check(p.returncode == 0, "record plugins.lua: %r" % p.stderr[-300:]):
    rep = run([LJM, "report", "--by", "plugin", labelled]).stdout.decode()
    inuse = {}
    m = re.search(r"^BY LABEL plugin .*\n.*\n((?:.*\S.*\n)*)", rep, re.M)
    ncol = 7 if m and "temporary" in m.group(0).split("\n")[1] else 6  # exact: temporaries too
    for ln in (m.group(1) if m else "").splitlines():
        f = ln.split()
        if len(f) > ncol and f[0][0].isdigit():
            inuse[" ".join(f[ncol:])] = int(f[0].rstrip("B"))
    top = run([LJM, "top", "--once", "--by", "plugin", "--top", "100", labelled]).stdout.decode()
    shown = {}
    for ln in top.splitlines():
        mm = re.match(r"^\s+([-\d.]+ [KMG]?i?B)\s+\d+ .* plugin=(.*)$", ln)
        if mm:
            shown[mm.group(2)] = mm.group(1)
    check(inuse and shown == {k: human(v) for k, v in inuse.items() if k in shown} and
          set(k for k, v in inuse.items() if v) <= set(shown),
          "--by plugin: values in use %r, report --by %r" % (shown, inuse))

sampled = os.path.join(TMP, "sampled.ljm")
p = run([LJM, "record", "-joff", "--sample", "4k", "-o", sampled, GROW, "1"])
top = run([LJM, "top", "--once", sampled]).stdout.decode()
check("estimates from a sampled recording" in top.splitlines()[0],
      "sampled: the header says estimates (%r)" % top.splitlines()[:1])

# -- A FIFO, and a file written in pieces ----------------------------------------
fifo = os.path.join(TMP, "fifo")
os.mkfifo(fifo)
rec = record_bg(fifo, 2)
p = run([LJM, "top", "--interval", "0.4", fifo], timeout=120)
rec.wait(timeout=60)
out = p.stdout.decode()
check(p.returncode == 0 and out.count("  at ") >= 2 and "the recording ended" in out,
      "FIFO: tables, then the end (exit %d %r)" % (p.returncode, p.stderr[-200:]))

with open(plain, "rb") as fh:
    data = fh.read()
pieces = os.path.join(TMP, "pieces.ljm")
open(pieces, "wb").close()


def write_pieces():
    # Cuts that fall inside events and strings: 7 pieces of odd sizes.
    step = len(data) // 7 + 13
    with open(pieces, "ab") as fh:
        for i in range(0, len(data), step):
            fh.write(data[i:i + step])
            fh.flush()
            time.sleep(0.4)


wt = threading.Thread(target=write_pieces)
wt.start()
p = run([LJM, "top", "--interval", "0.2", pieces], timeout=120)
wt.join()
out = p.stdout.decode()
check(p.returncode == 0 and out.count("  at ") >= 3,
      "pieces: tables while the file grows (exit %d %r)" % (p.returncode, p.stderr[-200:]))
last = out.strip().split("\n\n")[-1]
check(header_of(last) == header_of(once), "pieces: the last table is the whole file's")

# -- Refused ------------------------------------------------------------------------
p = run([LJM, "top", bad])
check(p.returncode == 1 and len(p.stderr.splitlines()) == 1 and p.stdout == b"",
      "not a stream: one line, exit 1, no table (%d %r %r)" % (p.returncode, p.stderr,
                                                               p.stdout[:80]))
gz = subprocess.run(["gzip", "-c", plain], capture_output=True).stdout
p = run([LJM, "top", "-"], input=gz)
check(p.returncode == 1 and b"compressed data on a pipe" in p.stderr and
      len(p.stderr.splitlines()) == 1, "gzip on a pipe: one line (%d %r)" % (p.returncode, p.stderr))
p = run([LJM, "top", "-"], input=data[:len(data) * 2 // 3])
check(p.returncode == 1 and b"stopped before its end (the pipe closed)" in p.stderr and
      len(p.stderr.splitlines()) == 1, "a pipe closed mid-stream: one line, exit 1 (%d %r)"
      % (p.returncode, p.stderr))
p = run([LJM, "top", "--once", os.path.join(TMP, "gz.ljm.gz")])
check(p.returncode == 1 and b"cannot open" in p.stderr, "a missing file: exit 1")
with open(os.path.join(TMP, "gz.ljm.gz"), "wb") as fh:
    fh.write(gz)
p = run([LJM, "top", "--once", os.path.join(TMP, "gz.ljm.gz")])
check(p.returncode == 0 and header_of(p.stdout.decode()) == header_of(once),
      "a gzip file: read like the plain one")

# A file that shrinks, and one replaced, while followed.
for what, act in (("shrank", "truncate"), ("was replaced", "replace")):
    f = os.path.join(TMP, "%s.ljm" % act)
    with open(f, "wb") as fh:
        fh.write(data[:len(data) // 2])
    top = subprocess.Popen([LJM, "top", "--interval", "0.2", f], cwd=TMP,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.5)
    if act == "truncate":
        with open(f, "r+b") as fh:
            fh.truncate(100)
    else:
        shutil.copy(plain, f + ".new")
        os.replace(f + ".new", f)
    try:
        so, se = top.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        top.kill()
        so, se = top.communicate()
    check(top.returncode == 1 and what.encode() in se and len(se.splitlines()) == 1,
          "a file that %s while followed: one line, exit 1 (%r %r)" % (what, top.returncode, se))

# A writer that keeps the pipe open after a complete stream: the end marker
# ends the watch.
writer = subprocess.Popen(["sh", "-c", 'cat "$1"; sleep 30', "sh", plain], stdout=subprocess.PIPE)
try:
    p = run([LJM, "top", "--interval", "0.3", "-"], stdin=writer.stdout, timeout=20)
    check(p.returncode == 0 and b"the recording ended" in p.stdout,
          "a pipe kept open after the end marker: ends there (%d %r)" % (p.returncode,
                                                                        p.stderr[-200:]))
except subprocess.TimeoutExpired:
    check(False, "a pipe kept open after the end marker: ljm top hangs")
writer.kill()
writer.wait()

# A gzip recording followed from its first moment, while still empty.
gzlive = os.path.join(TMP, "early.ljm.gz")
open(gzlive, "wb").close()
rec = record_bg(gzlive, 1)
p = run([LJM, "top", "--interval", "0.3", gzlive], timeout=120)
rec.wait(timeout=60)
check(p.returncode == 0 and b"the recording ended" in p.stdout,
      "a .gz file followed while still empty: read once it has its header (%d %r)"
      % (p.returncode, p.stderr[-200:]))

# A zstd file (zstd -c: one frame, blocks of up to 128 KiB) written in
# pieces cut inside its blocks: followed to its end, as the whole file reads.
zs = subprocess.run(["zstd", "-q", "-c", plain], capture_output=True).stdout
zlive = os.path.join(TMP, "pieces.ljm.zst")
with open(zlive, "wb") as fh:
    fh.write(zs[:len(zs) // 3])
top = subprocess.Popen([LJM, "top", "--interval", "0.2", zlive], cwd=TMP, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
time.sleep(1.2)
with open(zlive, "ab") as fh:
    fh.write(zs[len(zs) // 3:])
try:
    so, se = top.communicate(timeout=60)
except subprocess.TimeoutExpired:
    top.kill()
    so, se = top.communicate()
check(top.returncode == 0 and header_of(so.decode().strip().split("\n\n")[-1]) == header_of(once),
      "a zstd file written in pieces: followed to its end (%r %r)" % (top.returncode, se[-200:]))

# A signal before the first byte: exit 0, nothing to say.
empty = os.path.join(TMP, "empty.ljm")
open(empty, "wb").close()
top = subprocess.Popen([LJM, "top", empty], cwd=TMP, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
time.sleep(1)
top.terminate()
so, se = top.communicate(timeout=10)
check(top.returncode == 0 and se == b"", "SIGTERM while waiting: exit 0 (%d %r)"
      % (top.returncode, se))

# A complete file: the first table is the whole stream (grown +0 B).
p = run([LJM, "top", "--interval", "0.2", plain])
heads = re.findall(r"grown (\S+ \S+) \(last", p.stdout.decode())
check(heads and all(h == "+0 B" for h in heads), "a complete file: nothing grown (%r)" % heads)
# --once on a cut stream: its table, and a warning.
cut = os.path.join(TMP, "cut.ljm")
with open(cut, "wb") as fh:
    fh.write(data[:len(data) * 2 // 3 + 3])
p = run([LJM, "top", "--once", cut])
check(p.returncode == 0 and b" at " in p.stdout and b"warning" in p.stderr and
      len(p.stderr.splitlines()) == 1, "--once on a cut stream: the table and one warning (%r)"
      % p.stderr)

snap = os.path.join(TMP, "snap.ljh")
p = run([LJM, "record", "-joff", "-o", os.path.join(TMP, "s.ljm"), "--snapshot-at-exit", snap,
         GROW, "0.2"])
for args in (["top", snap], ["top", "--interval", "0", plain], ["top", "--sort", "x", plain],
             ["top", plain, plain]):
    p = run([LJM] + args)
    check(p.returncode == 2 and len(p.stderr.splitlines()) == 1,
          "ljm %s: usage error (%d %r)" % (" ".join(args[1:]), p.returncode, p.stderr))

sys.exit(check.done(minimum=25))
