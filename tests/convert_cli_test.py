#!/usr/bin/env python3
"""Command-line behaviour of `ljm convert`: format choice, usage errors, and
outputs that are never clobbered: a failed export leaves an existing file as
it was, never removes a device, and leaves no temporary file behind."""
import os
import stat
import subprocess
import sys
import tempfile

import clitest

LJM, DATA = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
PROFILE = os.path.join(DATA, "v3", "test.ljm")
BAD = os.path.join(DATA, "synthetic", "err_not_profile.ljm")
check = clitest.Checks("convert cli")
one_line = clitest.one_line
UMASK = os.umask(0)
os.umask(UMASK)


def run(args):
    return clitest.run(LJM, ["convert"] + args)




SUFFIXES = {".txt": b"ALLOCATIONS", ".json": b'"format":"ljmkit-json"', ".md": b"| Allocations |",
            ".folded": b"test.lua;", ".collapsedstack.txt": b"test.lua;", ".svg": b"<svg",
            ".pb.gz": b"\x1f\x8b", ".pprof": b"\x1f\x8b", ".heaptrack.gz": b"\x1f\x8b",
            ".heaptrack.zst": b"\x28\xb5\x2f\xfd"}
for sfx, magic in SUFFIXES.items():
    out = os.path.join(TMP, "out" + sfx)
    p = run(["-o", out, PROFILE])
    check(p.returncode == 0 and p.stderr == b"", "%s: exit %d %r" % (sfx, p.returncode, p.stderr))
    check(os.path.exists(out) and magic in open(out, "rb").read(4096), "%s: wrong content" % sfx)
    check(stat.S_IMODE(os.stat(out).st_mode) == 0o666 & ~UMASK,
          "%s: mode %o, not what a plain create gives" % (sfx, os.stat(out).st_mode))

p = run(["--help"])
check(p.returncode == 0, "convert --help: exit %d" % p.returncode)
# The formats table: one line per format, its three columns aligned (the
# suffixes and the summaries each start at one column on every line).
rows = clitest.formats_table(p.stdout.decode())
names = [name for _, name, _ in rows]
check(sorted(names) == sorted(["text", "folded", "svg", "markdown", "json", "pprof", "heaptrack",
                               "speedscope", "heapprofile", "ljm", "heapsnapshot"]),
      "convert --help lists every format: %r" % names)


def columns(line, sfx):
    """Where a row's suffixes and its summary start."""
    joined = " ".join(sfx)
    start = line.index(" " + joined) + 1
    summary = line[start + len(joined):].lstrip()
    return start, len(line) - len(summary)


cols = set(columns(line, sfx) for line, _, sfx in rows)
check(len(cols) == 1, "convert --help: the formats table's columns do not line up: %r" % cols)
for args, what in ((["-o", os.path.join(TMP, "x.bin"), PROFILE], b"cannot tell the format"),
                   (["-f", "bogus", "-o", "x", PROFILE], b"unknown format"),
                   (["--value", "bogus", "-o", "x.json", PROFILE], b"unknown --value"),
                   ([PROFILE], b"missing -o"),
                   (["-o", "x.json"], b"missing profile"),
                   (["--top", "-3", "-o", "x.md", PROFILE], b"--top"),
                   (["-o", "x.json", PROFILE, PROFILE], b"one profile at a time")):
    p = run(args)
    check(p.returncode == 2 and one_line(p) and what in p.stderr, "%s: %d %r" % (args, p.returncode, p.stderr))

# -o - writes to stdout (a pipe here), also for the binary pprof format.
p = run(["-f", "json", "-o", "-", PROFILE])
check(p.returncode == 0 and p.stdout.startswith(b'{"format":"ljmkit-json"'), "json to stdout")
p = run(["-f", "pprof", "-o", "-", PROFILE])
check(p.returncode == 0 and p.stdout[:2] == b"\x1f\x8b", "pprof to stdout")

# A bad profile: exit 1, and an existing output file keeps its content.
keep = os.path.join(TMP, "keep.json")
open(keep, "w").write("precious")
p = run(["-o", keep, BAD])
check(p.returncode == 1 and open(keep).read() == "precious", "bad input clobbered the output")
# Write errors on a device: reported, and the device is never removed.
if os.path.exists("/dev/full"):
    for fmt in ("json", "heaptrack", "text"):
        p = run(["-f", fmt, "-o", "/dev/full", PROFILE])
        check(p.returncode == 1 and b"No space left" in p.stderr, "/dev/full %s: %d %r" % (fmt, p.returncode, p.stderr))
        check(os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode),
              "/dev/full was removed by a failed %s export" % fmt)
p = run(["-f", "json", "-o", "/dev/null", PROFILE])
check(p.returncode == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null")
# A truncated profile converts (exit 0 with a warning).
cut = os.path.join(TMP, "cut.ljm")
open(cut, "wb").write(open(PROFILE, "rb").read()[:200000])
p = run(["-o", os.path.join(TMP, "cut.json"), cut])
check(p.returncode == 0 and b"warning" in p.stderr and os.path.exists(os.path.join(TMP, "cut.json")),
      "truncated input: %d %r" % (p.returncode, p.stderr))
p = run(["--strict", "-o", os.path.join(TMP, "cut2.json"), cut])
check(p.returncode == 1, "--strict on a truncated input")
leftovers = [f for f in os.listdir(TMP) if ".tmp-" in f]
check(not leftovers, "temporary files left behind: %s" % leftovers)

sys.exit(check.done())
