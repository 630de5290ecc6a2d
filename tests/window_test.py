#!/usr/bin/env python3
"""window_test.py -- time windows: --from and --to of report, convert and growth.

testdata/window/phases.lua runs three phases 0.3 s apart (keep_a keeps 2000
strings; churn makes 20 000 short-lived tables while half of keep_a's are
collected; keep_c keeps 3000). Recorded here with --stacks, --time and
--stacks --sample 4k; the windows are cut at the stream's own time marks
(read by tests/lib/ljmread.py), so a slow machine moves the phases, not the
truth:

* JSON's totals for each window (a phase, two phases, a stretch inside one,
  from a phase to the end, the whole) equal the independent reader's replay
  of the same window (ljmread.totals(data, window)): allocations in it, in
  use at its end with what its start carried in, its peak; window_us and
  duration_us say where it is.
* True of the program: in churn's window churn allocates and keep_a
  allocates nothing yet holds its 1000 strings (carried in), keep_c holds
  nothing; from keep_c's phase on keep_c allocates its 3000 strings.
* The text report counts exactly the window's events per section.
* In the viewers' own readers: go tool pprof -raw's sums and Duration,
  heaptrack_print's peak, leaked bytes and runtime, speedscope's profiles
  (carried-in blocks in use, not allocated).
* --from 0 is no window (folded, the text report, exact and sampled);
  '-T' from the end is the same window as its time from the start.
* growth --to: the lines at T; --skip with --from refused.
* Refused in one line: a stream without time marks, a window after the
  end, --to not after --from, -f ljm, a heap snapshot, '-30s' on standard
  input or /dev/stdin, times that are not times (hex, exponents, spaces),
  growth --to before the first mark.

usage: window_test.py LJM PHASES_LUA"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import ljmread
from checks import Checks

LJM = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
SCRIPT = os.path.join(TMP, "phases.lua")
shutil.copy(sys.argv[2], SCRIPT)
check = Checks("window")
END = 2**64 - 1
KEYS = ("alloc_count", "alloc_bytes", "inuse_count", "inuse_bytes", "peak_bytes")


def run(args, **kw):
    return subprocess.run(args, capture_output=True, timeout=300, cwd=TMP, **kw)


def text(p):
    return p.stdout.decode("utf-8", "replace")


def record(name, opts):
    out = os.path.join(TMP, name)
    p = run([LJM, "record", "-joff", "-o", out] + opts + [SCRIPT])
    check(p.returncode == 0 and b"phases: ok" in p.stdout,
          "record %s: %r %r" % (opts, p.stdout[-200:], p.stderr[-300:]))
    return out


def secs(us):
    return "%d.%06d" % (us // 1000000, us % 1000000)


def wargs(w):
    a = ["--from", secs(w[0])]
    return a + (["--to", secs(w[1])] if w[1] != END else [])


def convert(path, fmt, w, extra=()):
    out = os.path.join(TMP, "out." + fmt)
    p = run([LJM, "convert", "-q", "-f", fmt, "-o", out] + (wargs(w) if w else []) +
            list(extra) + [path])
    ok = check(p.returncode == 0, "convert -f %s %s %s: exit %d %r"
               % (fmt, w, os.path.basename(path), p.returncode, p.stderr[-300:]))
    if not ok:
        return None
    with open(out, "rb") as fh:
        return fh.read()


def fig_ok(want, key, got):
    lo, hi = want.get("count_bounds", {}).get(key, (want[key], want[key]))
    return isinstance(got, int) and lo <= got <= hi


def folded_sums(data, func):
    """Sum of the folded lines whose stack holds function func ("churn
    (phases.lua)")."""
    n = 0
    for line in data.decode().splitlines():
        stack, _, v = line.rpartition(" ")
        if any(f == func or f.startswith(func + " (") for f in stack.split(";")):
            n += int(v)
    return n


def phase_starts(marks):
    """Indices of the marks that start phases 2 and 3: after the program's
    first two waits, the first two of the three widest gaps between marks (a
    wait of 0.3 s of CPU time is at least that in real time). A host pausing
    the recording for less than a wait does not move them."""
    widest = sorted(range(len(marks) - 1), key=lambda i: marks[i + 1] - marks[i])[-3:]
    return [i + 1 for i in sorted(widest) if marks[i + 1] - marks[i] >= 250000]


stacks = record("stacks.ljm", ["--stacks"])
timed = record("time.ljm", ["--time"])
sampled = record("sampled.ljm", ["--stacks", "--sample", "4k"])

for path in (stacks, timed, sampled):
    tag = os.path.basename(path)
    with open(path, "rb") as fh:
        data = fh.read()
    st = ljmread.parse(data)
    marks = [m[1] for m in st.marks]
    gaps = phase_starts(marks)
    if not check(len(gaps) >= 2, "%s: the phases' gaps in the time marks %s" % (tag, marks)):
        continue
    b, c = marks[gaps[0]], marks[gaps[1]]
    last = marks[-1]
    inner = [t for t in marks if b < t < c]
    windows = [(0, END), (b, c), (c, END), (0, b), (b, END)]
    if inner:
        windows.append((inner[0], c))
    for w in windows:
        out = convert(path, "json", w)
        if out is None:
            continue
        doc = json.loads(out)
        got = doc["totals"]
        want = ljmread.totals(data, w)
        check(all(fig_ok(want, k, got.get(k)) for k in KEYS),
              "%s %s: JSON totals %s, the reader's replay %s"
              % (tag, w, {k: got.get(k) for k in KEYS}, {k: want[k] for k in KEYS}))
        end = min(w[1], last)
        check(doc["stream"]["window_us"] == [w[0], end] and
              doc["stream"]["duration_us"] == end - w[0],
              "%s %s: window_us %r duration_us %r" % (tag, w, doc["stream"]["window_us"],
                                                      doc["stream"]["duration_us"]))

    if path == sampled:
        continue
    # True of the program (exact streams): who allocates and who holds.
    func = {"stacks.ljm": ("keep_a", "churn", "keep_c")}.get(tag)
    if func:
        f_alloc = convert(path, "folded", (b, c), ["--value", "alloc_count"])
        f_inuse = convert(path, "folded", (b, c), ["--value", "inuse_count"])
        if f_alloc and f_inuse:
            check(folded_sums(f_alloc, "churn") >= 20000, "%s: churn's window: churn allocates"
                  " its 20000 tables (%d)" % (tag, folded_sums(f_alloc, "churn")))
            check(folded_sums(f_alloc, "keep_a") == 0 and folded_sums(f_alloc, "keep_c") == 0,
                  "%s: churn's window: keep_a and keep_c allocate nothing" % tag)
            check(1000 <= folded_sums(f_inuse, "keep_a") <= 1010,
                  "%s: churn's window: keep_a holds its 1000 strings, carried in (%d)"
                  % (tag, folded_sums(f_inuse, "keep_a")))
            check(folded_sums(f_inuse, "keep_c") == 0, "%s: churn's window: keep_c holds nothing"
                  % tag)
        f_c = convert(path, "folded", (c, END), ["--value", "alloc_count"])
        if f_c:
            check(3000 <= folded_sums(f_c, "keep_c") <= 3020 and folded_sums(f_c, "churn") == 0,
                  "%s: keep_c's window: keep_c allocates its 3000 strings (%d), churn nothing"
                  % (tag, folded_sums(f_c, "keep_c")))

    # The text report: each section's events are the window's.
    for w in ((b, c), (c, END)):
        p = run([LJM, "report", "-q"] + wargs(w) + [path])
        check(p.returncode == 0, "%s report %s: exit %d %r" % (tag, w, p.returncode, p.stderr))
        sections, cur = {}, None
        for line in text(p).splitlines():
            if line in ("ALLOCATIONS", "REALLOCATIONS", "DEALLOCATIONS"):
                cur = line
            elif line.startswith("HEAP SUMMARY"):
                cur = None
            else:
                mm = re.search(r": (\d+) events\t", line)
                if cur and mm:
                    sections[cur] = sections.get(cur, 0) + int(mm.group(1))
        # the model dates an event by the mark before it, as the reader does
        want = {}
        for e in st.events:
            t = e.us if e.us is not None else 0
            if w[0] <= t < w[1]:
                name = ljmread.SECTIONS[e.ev]
                want[name] = want.get(name, 0) + 1
        check(sections == want, "%s report %s: events per section %s, the stream's %s"
              % (tag, w, sections, want))

# -- The viewers' readers, on churn's window of the stacks stream ----------
with open(stacks, "rb") as fh:
    data = fh.read()
st = ljmread.parse(data)
marks = [m[1] for m in st.marks]
gaps = phase_starts(marks)
if check(len(gaps) >= 2, "stacks.ljm: phases"):
    w = (marks[gaps[0]], marks[gaps[1]])
    want = ljmread.totals(data, w)
    pb = os.path.join(TMP, "w.pb.gz")
    p = run([LJM, "convert", "-q", "-o", pb] + wargs(w) + [stacks])
    if check(p.returncode == 0, "pprof: %r" % p.stderr):
        r = run(["go", "tool", "pprof", "-raw", pb])
        lines = text(r).splitlines()
        sums = [0, 0, 0, 0]
        i = lines.index("Samples:") + 2 if "Samples:" in lines else len(lines)
        while i < len(lines) and re.match(r"^\s+(\d|\S+:\[)", lines[i]):
            if not re.match(r"^\s+\S+:\[", lines[i]):  # a sample's labels follow it
                v = lines[i].split(":")[0].split()
                sums = [a + int(x) for a, x in zip(sums, v)]
            i += 1
        check(sums == [want["alloc_count"], want["alloc_bytes"], want["inuse_count"],
                       want["inuse_bytes"]],
              "go tool pprof -raw: sums %s, the reader's %s" % (sums, want))
        check(any(l.startswith("Comment: window: %s s to %s s" % (secs(w[0]), secs(w[1])))
                  for l in lines), "go tool pprof -raw: the window's comment")
        dur = [l for l in lines if l.startswith("Duration:")]
        check(dur and abs(float(dur[0].split()[1]) - (w[1] - w[0]) / 1e3) < 2,
              "go tool pprof: Duration %r, the window %d us" % (dur, w[1] - w[0]))
    ht = os.path.join(TMP, "w.heaptrack.gz")
    p = run([LJM, "convert", "-q", "-o", ht] + wargs(w) + [stacks])
    if check(p.returncode == 0, "heaptrack: %r" % p.stderr):
        r = text(run(["heaptrack_print", "-f", ht, "-M", "0", "-n", "0", "-p", "0", "-a", "0",
                      "-T", "0", "-l", "0"]))
        rt = re.search(r"total runtime: ([\d.]+)s", r)
        check(rt and abs(float(rt.group(1)) - (w[1] - w[0]) / 1e6) < 0.02,
              "heaptrack_print: runtime %r, the window %d us" % (rt and rt.group(0), w[1] - w[0]))

        def size(label):
            mm = re.search(label + r": ([\d.]+)([KMG]?)B?", r)
            if not mm:
                return None
            return float(mm.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[mm.group(2)]
        for label, key in (("peak heap memory consumption", "peak_bytes"),
                           ("total memory leaked", "inuse_bytes")):
            got = size(label)
            check(got is not None and abs(got - want[key]) <= max(10, want[key] * 0.001),
                  "heaptrack_print: %s %r, the reader's %s %d" % (label, got, key, want[key]))
    ss = convert(stacks, "speedscope", w)
    if ss:
        doc = json.loads(ss)
        got = {p["name"].split(":")[0]: sum(p["weights"]) for p in doc["profiles"]
               if p["type"] == "sampled"}
        check(all(got.get(k) == want[k] for k in ("alloc_bytes", "alloc_count", "inuse_bytes",
                                                  "inuse_count", "peak_bytes")),
              "speedscope: profiles' sums %s, the reader's %s" % (got, want))
        tl = [p for p in doc["profiles"] if p["type"] == "evented"]
        check(tl and tl[0]["endValue"] == w[1] - w[0],
              "speedscope: the time profile ends at the window's length")

# -- No window, and from the end ----------------------------------------
for path in (stacks, sampled):
    tag = os.path.basename(path)
    for fmt, extra in (("folded", ["--value", "inuse_bytes"]), ("folded", []), ("text", [])):
        whole = convert(path, fmt, None, extra)
        zero = convert(path, fmt, (0, END), extra)
        check(whole is not None and whole == zero, "%s -f %s %s: --from 0 is no window"
              % (tag, fmt, extra))
    with open(path, "rb") as fh:
        marks = [m[1] for m in ljmread.parse(fh.read()).marks]
    mid = marks[len(marks) // 2]
    back = marks[-1] - mid
    a = convert(path, "json", (mid, END))
    p = run([LJM, "convert", "-q", "-f", "json", "-o", "-", "--from", "-" + secs(back), path])
    check(p.returncode == 0 and a is not None and json.loads(p.stdout) == json.loads(a),
          "%s: --from -%s is --from %s" % (tag, secs(back), secs(mid)))
    p2 = run([LJM, "convert", "-q", "-f", "json", "-o", "-", "--to", "-" + secs(back), path])
    b2 = convert(path, "json", (0, mid))
    check(p2.returncode == 0 and b2 is not None and json.loads(p2.stdout) == json.loads(b2),
          "%s: --to -%s is --to %s" % (tag, secs(back), secs(mid)))

# A window between marks: the blocks it carries in have no time of their
# own (speedscope's time profile once divided by their count of 0).
with open(stacks, "rb") as fh:
    marks = [m[1] for m in ljmread.parse(fh.read()).marks]
ss = convert(stacks, "speedscope", (marks[len(marks) // 2] + 1, END))
check(ss is not None and json.loads(ss)["profiles"], "speedscope: a window between two marks")

# -- growth ----------------------------------------------------------------
with open(stacks, "rb") as fh:
    marks = [m[1] for m in ljmread.parse(fh.read()).marks]
c = marks[phase_starts(marks)[-1]]
p = run([LJM, "growth", "-q", "--json", "--to", secs(c), stacks])
# growth's own refusal (too short) or its tables: either way --to is taken
check(p.returncode in (0, 1) and (p.returncode == 0 or b"too short" in p.stderr),
      "growth --to: exit %d %r" % (p.returncode, p.stderr))
p = run([LJM, "growth", "--skip", "1", "--from", "1", stacks])
check(p.returncode == 2 and b"--skip" in p.stderr and len(p.stderr.splitlines()) == 1,
      "growth --skip with --from: a usage error (%d %r)" % (p.returncode, p.stderr))

# -- Refused in one line -----------------------------------------------------
standard = record("standard.ljm", [])
snap = os.path.join(TMP, "snap.ljh")
cases = [
    (["report", "--from", "0.1", standard], 1, "no time marks"),
    (["convert", "-f", "json", "-o", "-", "--to", "1", standard], 1, "no time marks"),
    (["report", "--from", "100", stacks], 1, "after the recording's end"),
    (["report", "--from", "2", "--to", "1", stacks], 2, "not after"),
    (["convert", "-f", "ljm", "-o", os.path.join(TMP, "x.ljm"), "--from", "0.1", stacks], 2,
     "without a window"),
    (["report", "--from", "soon", stacks], 2, "wants a time"),
    (["report", "--to", "--5", stacks], 2, "wants a time"),
    (["report", "--from", "0x1p-2", stacks], 2, "wants a time"),
    (["report", "--from", "1e1", stacks], 2, "wants a time"),
    (["report", "--from", " 1", stacks], 2, "wants a time"),
    (["report", "--from", "-1s", "/dev/stdin"], 2, "needs a regular FILE"),
    (["growth", "--to", "0.000001", stacks], 1, "no time mark before --to"),
]
for args, rc, what in cases:
    p = run([LJM] + args)
    err = p.stderr.decode()
    check(p.returncode == rc and what in err and len(err.strip().splitlines()) == 1,
          "ljm %s: exit %d %r (want %d, %r)" % (" ".join(args), p.returncode, err, rc, what))
with open(stacks, "rb") as fh:
    p = run([LJM, "report", "--from", "-1s", "-"], stdin=fh)
check(p.returncode == 2 and b"standard input" in p.stderr,
      "report --from -1s -: refused (%d %r)" % (p.returncode, p.stderr))
# A heap snapshot of the same program has no time.
p = run([LJM, "record", "-joff", "-o", os.path.join(TMP, "with_snap.ljm"), "--snapshot-at-exit",
         snap, SCRIPT])
if check(p.returncode == 0, "record --heap: %r" % p.stderr[-300:]):
    p = run([LJM, "convert", "-f", "folded", "-o", "-", "--from", "1", snap])
    check(p.returncode == 1 and b"no time" in p.stderr, "a heap snapshot with --from: %d %r"
          % (p.returncode, p.stderr))

sys.exit(check.done())
