#!/usr/bin/env python3
"""Error paths and command-line behaviour of `ljm report`.

Every bad input gives one stderr line "FILE: byte N: what", exit 1 and no
crash; a stream that simply stops gives its partial report, a warning with
the offset and exit 0 (exit 1 under --strict). Usage errors exit 2. A
sampled stream's report says it shows estimates, and they are those
computed here from its events, to 3 significant digits.
"""
import functools
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

import testlib
from checks import Checks
import ljmread  # the tests' own stream reader (tests/lib/ljmread.py)

LJM = sys.argv[1]
DATA = sys.argv[2]
SYN = os.path.join(DATA, "synthetic")
TMP = os.environ.get("TEST_TMPDIR") or tempfile.mkdtemp()
check = Checks("report cli")
one_line = testlib.one_line


run = functools.partial(testlib.run_ljm, LJM, timeout=60)  # run(args, stdin=None)





ERRORS = {
    "err_asource_0": (74, "unknown allocation source 0"),
    "err_bad_ljm_magic": (67, "bad event section magic 'xyz'"),
    "err_bad_ljm_version": (70, "event section version 2 does not go with symbol table version 3"),
    "err_bad_ljs_version": (11, "event section version 3 does not go with symbol table version 2"),
    "err_empty_file": (0, "empty input"),
    "err_header_0x14": (74, "unknown event header 0x14"),
    "err_header_0x81": (74, "unknown event header 0x81"),
    "err_not_profile": (0, "bad symbol table magic 'dat'"),
}
TRUNCATED = {
    "err_eof_in_symtab": (23, "stream stops inside the symbol table"),
    "err_no_epilogue": (86, "stream stops without its 0x80 end marker"),
    "err_truncated_before_ljm": (67, "stream stops inside the event section prologue"),
    "err_truncated_event": (82, "stream stops inside an alloc event that starts at byte 74"),
}

seen = sorted(f[:-4] for f in os.listdir(SYN) if f.startswith("err_") and f.endswith(".ljm"))
check(seen == sorted(list(ERRORS) + list(TRUNCATED)), "every err_* stream has an expectation")

for mode in ([], ["--leak-only"], ["--human-readable"]):
    for name, (off, msg) in ERRORS.items():
        path = os.path.join(SYN, name + ".ljm")
        p = run(["report"] + mode + [path])
        err = p.stderr.decode()
        check(p.returncode == 1, "%s %s: exit %d, want 1" % (name, mode, p.returncode))
        check(one_line(p), "%s %s: stderr is not one line: %r" % (name, mode, err))
        check(err.startswith("%s: byte %d: %s" % (path, off, msg)),
              "%s %s: stderr %r" % (name, mode, err))
    for name, (off, msg) in TRUNCATED.items():
        path = os.path.join(SYN, name + ".ljm")
        p = run(["report"] + mode + [path])
        err = p.stderr.decode()
        check(p.returncode == 0, "%s %s: exit %d, want 0" % (name, mode, p.returncode))
        check(one_line(p) and err.startswith("%s: byte %d: warning: %s" % (path, off, msg)),
              "%s %s: stderr %r" % (name, mode, err))
        check(b"HEAP SUMMARY:\n" in p.stdout, "%s %s: no partial report" % (name, mode))
        s = run(["report", "--strict"] + mode + [path])
        check(s.returncode == 1 and one_line(s) and b"warning" not in s.stderr
              and msg.encode() in s.stderr, "%s --strict %s: %r" % (name, mode, s.stderr))

p = run(["report", os.path.join(SYN, "err_no_epilogue.ljm")])
check(b"@a.lua:2: 1 events\t+8B\t-0B\n" in p.stdout, "no_epilogue: the event before the cut is lost")

# A real stream cut anywhere: partial report, never an error.
full = open(os.path.join(DATA, "v3", "test.ljm"), "rb").read()
whole = run(["report", os.path.join(DATA, "v3", "test.ljm")])
for cut in (5, 7, 100, 123400, len(full) // 2, len(full) - 1):
    path = os.path.join(TMP, "cut.ljm")
    open(path, "wb").write(full[:cut])
    p = run(["report", path])
    check(p.returncode == 0 and one_line(p) and b": warning: stream stops" in p.stderr,
          "cut at %d: exit %d %r" % (cut, p.returncode, p.stderr))
    check(re.search(rb"byte %d: " % cut, p.stderr) is not None, "cut at %d: offset not named" % cut)
    if cut == len(full) - 1:  # only the end marker is missing: nothing lost
        check(p.stdout == whole.stdout, "cut before the end marker: events lost")
    if cut == len(full) // 2:
        check(b"@test.lua:14:" in p.stdout and p.stdout != whole.stdout,
              "cut in the middle: partial report missing")

# gzip files, stdin, and a broken gzip file.
gz = os.path.join(TMP, "test.ljm.gz")
open(gz, "wb").write(gzip.compress(full))
p = run(["report", gz])
check(p.returncode == 0 and p.stdout == whole.stdout and p.stderr == b"", "gzip input differs")
p = run(["report", "-"], stdin=full)
check(p.returncode == 0 and p.stdout == whole.stdout, "stdin input differs")
p = run(["report", "-"], stdin=gzip.compress(full))
check(p.returncode == 0 and p.stdout == whole.stdout, "gzip on stdin differs")
cutgz = os.path.join(TMP, "cut.ljm.gz")
data = gzip.compress(full)
open(cutgz, "wb").write(data[: len(data) // 2])
p = run(["report", cutgz])
check(p.returncode == 0 and b"warning: stream stops" in p.stderr, "cut gzip: %r" % p.stderr)


def damaged(data, name):
    """Reports a copy of data with 64 bytes flipped a third of the way in."""
    bad = bytearray(data)
    for i in range(len(bad) // 3, len(bad) // 3 + 64):
        bad[i] ^= 0x5a
    path = os.path.join(TMP, name)
    open(path, "wb").write(bytes(bad))
    return run(["report", path])


p = damaged(data, "bad.ljm.gz")
check(p.returncode == 1 and one_line(p) and re.match(rb".*bad\.ljm\.gz: byte \d+: (corrupt gzip data|.*)", p.stderr),
      "corrupt gzip: exit %d %r" % (p.returncode, p.stderr))

# zstd files (one frame, and frames one after another), stdin, a cut and a
# broken one; compressed by the zstd tool (installed by setup.sh --tests).
def zstd(data, *opts):
    return subprocess.run(["zstd", "-q", "-c"] + list(opts), input=data, capture_output=True,
                          check=True).stdout
zs = zstd(full, "-19")
check(zs[:4] == b"\x28\xb5\x2f\xfd", "zstd tool output has zstd's magic")
zst = os.path.join(TMP, "test.ljm.zst")
open(zst, "wb").write(zs)
p = run(["report", zst])
check(p.returncode == 0 and p.stdout == whole.stdout and p.stderr == b"", "zstd input differs: %r" % p.stderr[:200])
p = run(["report", "-"], stdin=zs)
check(p.returncode == 0 and p.stdout == whole.stdout, "zstd on stdin differs")
frames = zstd(full[:1000]) + zstd(full[1000:len(full) // 2]) + zstd(full[len(full) // 2:])
p = run(["report", "-"], stdin=frames)
check(p.returncode == 0 and p.stdout == whole.stdout, "zstd frames one after another differ")
p = run(["convert", "-f", "json", "-o", "-", zst])
info = json.loads(p.stdout)["stream"] if p.returncode == 0 else {}
check(info.get("zstd") is True and info.get("gzip") is False and info.get("bytes") == len(full),
      "JSON stream of a zstd input: %r" % info)
p = run(["convert", "-f", "json", "-o", "-", gz])
info = json.loads(p.stdout)["stream"] if p.returncode == 0 else {}
check(info.get("zstd") is False and info.get("gzip") is True, "JSON stream of a gzip input: %r" % info)
# Cut inside the last of three frames: the first two (half the stream, into
# the events) are kept and reported.
cutzs = os.path.join(TMP, "cut.ljm.zst")
open(cutzs, "wb").write(frames[:-10])
p = run(["report", cutzs])
m = re.search(rb"byte (\d+): warning: stream stops", p.stderr)
check(p.returncode == 0 and m is not None and int(m.group(1)) >= len(full) // 2 and
      b"@test.lua:14:" in p.stdout, "cut zstd: %r" % p.stderr)
p = run(["report", "--strict", cutzs])
check(p.returncode == 1, "cut zstd under --strict: exit %d" % p.returncode)
p = damaged(zs, "bad.ljm.zst")
check(p.returncode == 1 and one_line(p) and
      re.match(rb".*bad\.ljm\.zst: byte \d+: corrupt zstd data", p.stderr) is not None,
      "corrupt zstd: exit %d %r" % (p.returncode, p.stderr))
p = run(["report", "-"], stdin=zs[:3])  # not even the whole magic: not zstd, not a profile
check(p.returncode == 1 and one_line(p), "three bytes of zstd magic: exit %d %r" % (p.returncode, p.stderr))

# A sampled stream (decoder/EXTENSION.md, "Sampling"): every row of the
# three sections shows the estimates of its events, computed here: a block
# in the sample of s bytes stands for 1/p(s) blocks (rounded down or up)
# and s/p(s) bytes; a free or reallocation takes away what its block
# added, nothing for a block not in the sample; after 0x31 a
# reallocation's new block counts nothing.
def round3(n):
    scale = 1
    while n >= 1000 * scale:
        scale *= 10
    return (n + scale // 2) // scale * scale


def sampled_rows(data):
    """(rate, {(section, location): [fewest, most events, +bytes, -bytes]})."""
    r = ljmread.Reader(data)
    syms = ljmread.Symbols()
    ljmread.read_symtab(r, syms)
    r.prologue(b"ljm")
    check(r.byte() == 0x30, "sampled.ljm: the rate item first")
    rate, live, rows, nosample = r.uleb(), {}, {}, False
    while True:
        h = r.byte()
        if h == 0x80:
            return rate, rows
        if h == 0x31:
            nosample = True
        elif h == 0x20:
            r.uleb()
            ljmread.read_frame(r)
        elif h in (0x21, 0x22, 0x23):
            r.uleb()
        elif 0x24 <= h <= 0x2F:
            ljmread.read_body(r)
        elif h & 3 == 0:
            syms.read(r, ljmread.SYM_OF_SOURCE.get(h & 0x1C))
        else:
            ev, src = h & 3, h & 0x1C
            loc = ljmread.read_loc(r, src)
            check(src in (ljmread.SRC_LUA, ljmread.SRC_INT), "sampled.ljm: source %#x" % src)
            name = "%s:%d" % (syms.lfunc[loc[0]], loc[1]) if loc else "INTERNAL"
            oaddr, _, naddr, nsize = ljmread.read_sizes(r, ev)
            row = rows.setdefault((ljmread.SECTIONS[ev], name), [0, 0, 0, 0])
            if oaddr is not None:
                lo, hi, est = live.pop(oaddr, (0, 0, 0))
                row[3] += est
                if ev == ljmread.FREE:
                    row[0], row[1] = row[0] + lo, row[1] + hi
            if naddr is not None and not nosample:
                lo, hi, est = ljmread.sample_weight(rate, nsize)
                live[naddr] = (lo, hi, est)
                row[0], row[1], row[2] = row[0] + lo, row[1] + hi, row[2] + est
            nosample = False


sampled = os.path.join(DATA, "ext", "sampled.ljm")
rate, want = sampled_rows(open(sampled, "rb").read())
p = run(["report", sampled])
lines = p.stdout.decode().split("\n")
check(p.returncode == 0 and rate == 1024 and lines[0] == "SAMPLED: estimates from a sampled "
      "recording (one allocated byte in 1 KiB), rounded to 3 digits" and lines[1] == "",
      "sampled.ljm: exit %d, first lines %r" % (p.returncode, lines[:2]))
got, sec = {}, None
for ln in lines:
    sec = ln if ln in ljmread.SECTIONS.values() else None if ln.startswith("HEAP") else sec
    m = re.match(r"^(.*): (\d+) events\t\+(\d+)B\t-(\d+)B$", ln)
    if sec and m:
        got[(sec, m.group(1))] = [int(x) for x in m.groups()[1:]]
check(sorted(got) == sorted(want) and len(want) >= 5,
      "sampled.ljm: report rows %r, the stream's %r" % (sorted(got), sorted(want)))
for k, (lo, hi, a, f) in sorted(want.items()):
    n, ga, gf = got.get(k, (None, None, None))
    check(n is not None and round3(lo) <= n <= round3(hi) and ga == round3(a) and gf == round3(f),
          "sampled.ljm %s: %r events +%rB -%rB, expected %d..%d events +%dB -%dB"
          % (k, n, ga, gf, lo, hi, round3(a), round3(f)))
# The heap summary's figures are rounded too.
held = re.findall(r"^.* holds (\d+)B: (\d+) allocs, (\d+) frees$", p.stdout.decode(), re.M)
check(held and all(round3(int(x)) == int(x) for h in held for x in h),
      "sampled.ljm: heap summary not rounded to 3 digits: %r" % held)

# Command line.
p = run([])
check(p.returncode == 2 and one_line(p) and b"--help" in p.stderr, "no command: %r" % p.stderr)
p = run(["bogus"])
check(p.returncode == 2 and one_line(p), "unknown command: %r" % p.stderr)
p = run(["--help"])
check(p.returncode == 0 and b"report" in p.stdout and b"convert" in p.stdout, "ljm --help")
p = run(["--version"])
check(p.returncode == 0 and re.match(rb"ljm \d+\.\d+\.\d+", p.stdout), "ljm --version")
# ... and the LuaJIT builds the recorder has, Debian 12's two first.
builds = p.stdout.decode().split("recorder built for:\n", 1)[-1].splitlines()
check(len(builds) >= 2 and builds[0].startswith("  Debian 12 luajit ") and
      builds[1].startswith("  Debian 12 luajit2 ") and
      all(re.search(r" \(LuaJIT 2\.1\.\S+, (not )?GC64\)$", b) for b in builds),
      "ljm --version lists the builds: %r" % builds)
p = run(["report", "--help"])
check(p.returncode == 0 and b"--leak-only" in p.stdout and b"--strict" in p.stdout, "report --help")
for args in (["report"], ["report", "--wrong", "x.ljm"], ["report", "-x", "x.ljm"],
             ["report", "a.ljm", "b.ljm"]):
    p = run(args)
    check(p.returncode == 2 and one_line(p) and b"ljm report --help" in p.stderr,
          "%s: exit %d %r" % (args, p.returncode, p.stderr))
p = run(["report", "/nonexistent/file.ljm"])
check(p.returncode == 1 and one_line(p) and b"/nonexistent/file.ljm: cannot open: No such file" in p.stderr,
      "missing file: %r" % p.stderr)
p = run(["report", TMP])
check(p.returncode == 1 and one_line(p), "directory as input: %d %r" % (p.returncode, p.stderr))
if os.path.exists("/dev/full"):
    with open("/dev/full", "wb") as full_dev:
        p = subprocess.run([LJM, "report", os.path.join(DATA, "v3", "test.ljm")],
                           stdout=full_dev, stderr=subprocess.PIPE, timeout=60)
    check(p.returncode == 1 and b"write error" in p.stderr, "/dev/full: %d %r" % (p.returncode, p.stderr))

# A heap snapshot given to report (or a profile to heap) names the command
# that reads it, in one line.
snap = os.path.join(TMP, "snap.ljh")
with open(snap, "wb") as f:
    f.write(b"ljh\x02" + b"\0" * 60)
p = run(["report", snap])
check(p.returncode == 1 and one_line(p) and b"a heap snapshot, not an ljm profile" in p.stderr
      and b"'ljm heap' reads it" in p.stderr, "report of a snapshot: %d %r" % (p.returncode, p.stderr))
p = run(["heap", os.path.join(DATA, "v3", "test.ljm")])
check(p.returncode == 1 and b"an ljm profile" in p.stderr and b"'ljm report'" in p.stderr,
      "heap of a profile: %d %r" % (p.returncode, p.stderr))
# ljm heap's three views: a message that names the options given, never one
# the user did not give.
t = os.path.join(DATA, "v3", "test.ljm")
for args, named, not_named in (
        (["--base", "a.ljh", "--top", "^table$"], (b"--top ^table$", b"--base a.ljh"), b"--path-to"),
        (["--top", "Point", "--path-to", "x"], (b"--top Point", b"--path-to x"), b"--base"),
        (["--base", "a.ljh", "--path-to", "x"], (b"--base a.ljh", b"--path-to x"), b"--top")):
    p = run(["heap"] + args + [t])
    check(p.returncode == 2 and one_line(p) and all(n in p.stderr for n in named)
          and not_named not in p.stderr, "heap %s: %d %r" % (args, p.returncode, p.stderr))
p = run(["heap", "--help"])
check(b"[--top TYPE | --base OLD | --path-to PATTERN]" in p.stdout, "heap --help states the views")
# --traces=lines: every trace's rows on the line it started at, the same
# totals; the default keeps the reference's rows and says once on stderr
# that traces hold most allocations.
jit = os.path.join(DATA, "v3", "jit_on.ljm")
ref = run(["report", jit])
lines = run(["report", "--traces=lines", jit])
check(ref.returncode == 0 and b"TRACE [1] started at @jit_on.lua:14: 3981 events" in ref.stdout
      and ref.stderr.count(b"\n") == 1 and b"--traces=lines" in ref.stderr and b"-joff" in ref.stderr,
      "jit_on: the reference's rows and one note: %r" % ref.stderr)
check(lines.returncode == 0 and b"TRACE [" not in lines.stdout and lines.stderr == b""
      and b"@jit_on.lua:14: 3981 events" in lines.stdout, "--traces=lines: %r" % lines.stdout[:300])


def totals(out):
    rows = re.findall(rb"^\S.*: (\d+) events\t\+(\d+)B\t-(\d+)B$", out, re.M)
    return [sum(int(r[i]) for r in rows) for i in range(3)]


check(totals(ref.stdout) == totals(lines.stdout), "--traces=lines keeps the totals: %r %r"
      % (totals(ref.stdout), totals(lines.stdout)))
p = run(["report", "--traces=nope", jit])
check(p.returncode == 2 and one_line(p), "--traces=nope: %d %r" % (p.returncode, p.stderr))
p = run(["report", t])
check(p.returncode == 0 and p.stderr == b"", "no note where traces hold little: %r" % p.stderr)

# `ljm report` keeps only what the report needs (ljm_model_set_reference_only);
# `ljm convert -f text` builds the whole model. Both print the same report,
# with the same exit status, on every stream here: standard, stacked, timed,
# sampled, cut short, refused mid-way (sizes and totals past the limits).
streams = sorted(os.path.join(d, f) for d in (SYN, os.path.join(DATA, "v3"),
                                               os.path.join(DATA, "ext"),
                                               os.path.join(DATA, "fuzz"))
                 for f in os.listdir(d) if f.endswith(".ljm"))
check(len(streams) >= 40, "streams for the report/convert comparison: %d" % len(streams))
for f in streams:
    for opts in ([], ["--leak-only"], ["--human-readable"]):
        r = run(["report", "-q"] + opts + [f])
        c = run(["convert", "-q", "-f", "text"] + opts + ["-o", "-", f])
        check(r.returncode == c.returncode and r.stdout == c.stdout,
              "report %s %s: as convert -f text (exit %d and %d, %d and %d bytes)"
              % (" ".join(opts), os.path.basename(f), r.returncode, c.returncode,
                 len(r.stdout), len(c.stdout)))

sys.exit(check.done(minimum=100))
