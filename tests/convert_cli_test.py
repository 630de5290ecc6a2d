#!/usr/bin/env python3
"""Command-line behaviour of `ljm convert`: format choice, usage errors, and
outputs that are never clobbered: a failed export or conversion leaves an
existing file as it was, never removes a device, and leaves no temporary
file behind, also when killed by SIGHUP, SIGINT or SIGTERM; a symbolic link
output stays a link (its target is replaced); write errors and a refused
zstd window are one line saying what happened."""
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time

import testlib
from checks import Checks
from ljmwrite import uleb

LJM, DATA = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
PROFILE = os.path.join(DATA, "v3", "test.ljm")
BAD = os.path.join(DATA, "synthetic", "err_not_profile.ljm")
check = Checks("convert cli")
one_line = testlib.one_line
UMASK = os.umask(0)
os.umask(UMASK)


def run(args):
    return testlib.run_ljm(LJM, ["convert"] + args)




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
rows = testlib.formats_table(p.stdout.decode())
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

ALL_SUFFIXES = list(SUFFIXES) + [".speedscope.json", ".heapprofile"]
# -o "" names no file: a usage error, as a missing value is.
for args in (["-f", "json", "-o", "", PROFILE], ["--output=", "-f", "json", PROFILE]):
    p = run(args)
    check(p.returncode == 2 and one_line(p) and b"needs a value" in p.stderr,
          "%s: %d %r" % (args, p.returncode, p.stderr))

# A symbolic link output is followed (through a chain, relative to the
# link's directory): the target gets the output, the links stay links.
LINKS = os.path.join(TMP, "links")
os.makedirs(os.path.join(LINKS, "d"))
real = os.path.join(LINKS, "d", "real.json")
open(real, "w").write("old")
os.symlink("d/real.json", os.path.join(LINKS, "one.json"))
os.symlink("one.json", os.path.join(LINKS, "two.json"))
for sfx in (".json", ".ljm"):  # the model's formats and the downgrade
    link = os.path.join(LINKS, "two" + sfx)
    if sfx == ".ljm":
        open(os.path.join(LINKS, "d", "real.ljm"), "w").write("old")
        os.symlink("d/real.ljm", link)
    p = run(["-o", link, PROFILE])
    target = os.path.join(LINKS, "d", "real" + sfx)
    check(p.returncode == 0 and p.stderr == b"", "link %s: %d %r" % (sfx, p.returncode, p.stderr))
    check(os.path.islink(link) and os.path.islink(os.path.join(LINKS, "one.json")),
          "link %s: the link was replaced by a file" % sfx)
    check(open(target, "rb").read(4) != b"old", "link %s: the target was not written" % sfx)
check(open(real, "rb").read().startswith(b'{"format":"ljmkit-json"'), "link: the target is not the JSON")
# A dangling link is refused, as cp refuses it: nothing is created.
dang = os.path.join(LINKS, "dangling.json")
os.symlink("nowhere.json", dang)
p = run(["-o", dang, PROFILE])
check(p.returncode == 1 and one_line(p) and b"dangling" in p.stderr and os.path.islink(dang)
      and not os.path.exists(os.path.join(LINKS, "nowhere.json")),
      "dangling link: %d %r" % (p.returncode, p.stderr))
# A link to a device is written in place, as the device is.
devlink = os.path.join(LINKS, "null.json")
os.symlink("/dev/null", devlink)
p = run(["-o", devlink, PROFILE])
check(p.returncode == 0 and os.path.islink(devlink), "link to /dev/null: %d %r" % (p.returncode, p.stderr))
leftovers = [f for _, _, fs in os.walk(LINKS) for f in fs if ".tmp-" in f]
check(not leftovers, "links: temporary files left behind: %s" % leftovers)

# A conversion that fails after the event section started (byte 74 of
# err_header_0x14) exits 1 and neither replaces an existing output nor
# creates one, in every format; stdout still gets what was read before.
FAILS = os.path.join(DATA, "synthetic", "err_header_0x14.ljm")
for sfx in ALL_SUFFIXES:
    keep = os.path.join(TMP, "failed" + sfx)
    open(keep, "w").write("precious")
    p = run(["-o", keep, FAILS])
    check(p.returncode == 1 and one_line(p) and b"byte 74" in p.stderr,
          "failed conversion %s: %d %r" % (sfx, p.returncode, p.stderr))
    check(open(keep, "rb").read() == b"precious", "failed conversion %s replaced the output" % sfx)
    new = os.path.join(TMP, "failed-new" + sfx)
    p = run(["-o", new, FAILS])
    check(p.returncode == 1 and not os.path.exists(new), "failed conversion %s created %s" % (sfx, new))
p = run(["-f", "json", "-o", "-", FAILS])
check(p.returncode == 1 and p.stdout.startswith(b'{"format":"ljmkit-json"'),
      "failed conversion to stdout: what was read is printed")


def ljh_string(s):
    return uleb(len(s)) + s


def heap_snapshot(label_len):
    """A heap snapshot (.ljh): the root, whose edge "s" leads to a string
    with a label_len-byte label, so the .heapsnapshot outgrows any buffer."""
    root = b"\x01" + uleb(0) + uleb(0) + ljh_string(b"") + uleb(1) + b"\x01" + uleb(16) + ljh_string(b"s")
    string = b"\x02" + uleb(16) + uleb(label_len) + ljh_string(b"k" * label_len) + uleb(0)
    return b"ljh\x01" + ljh_string(b"hand-made") + uleb(1000) + root + string + b"\x00"


snap = os.path.join(TMP, "snap.ljh")
open(snap, "wb").write(heap_snapshot(100000))
p = run(["-o", os.path.join(TMP, "snap.heapsnapshot"), snap])
check(p.returncode == 0 and os.path.getsize(os.path.join(TMP, "snap.heapsnapshot")) > 100000,
      "heap snapshot: %d %r" % (p.returncode, p.stderr))
# A cut snapshot fails (exit 1) and leaves an existing output as it was.
cut_snap = os.path.join(TMP, "cut.ljh")
open(cut_snap, "wb").write(heap_snapshot(100000)[:-1])
keep = os.path.join(TMP, "keep.heapsnapshot")
open(keep, "w").write("precious")
p = run(["-o", keep, cut_snap])
check(p.returncode == 1 and open(keep, "rb").read() == b"precious",
      "cut heap snapshot: %d %r, output %r" % (p.returncode, p.stderr, open(keep, "rb").read(20)))

# Write errors: one line naming the output and the system's reason (the
# outputs outgrow stdio's buffer, so most fail while being written).
if os.path.exists("/dev/full"):
    cases = [(["-f", f], PROFILE) for f in ("text", "folded", "svg", "markdown", "json", "pprof",
                                               "heaptrack", "speedscope", "heapprofile", "ljm")]
    cases.append((["-f", "heapsnapshot"], snap))
    for args, src in cases:
        p = run(args + ["-o", "/dev/full", src])
        check(p.returncode == 1 and one_line(p) and b"/dev/full" in p.stderr
              and b"No space left on device" in p.stderr,
              "/dev/full %s: %d %r" % (args, p.returncode, p.stderr))


def zstd_raw_frame(data, window_descriptor):
    """A zstd frame of raw blocks whose header declares the window of
    window_descriptor (RFC 8878 3.1.1.1.2: 0xA0 is 1 GiB, 0x50 1 MiB)."""
    out = b"\x28\xb5\x2f\xfd\x00" + bytes([window_descriptor])
    chunks = [data[i:i + 65536] for i in range(0, len(data), 65536)] or [b""]
    for i, c in enumerate(chunks):
        last = i == len(chunks) - 1
        out += (int(last) | len(c) << 3).to_bytes(3, "little") + c
    return out


# A zstd window above the limit is said to be one, where it is read.
prof = open(PROFILE, "rb").read()
ok_zst = os.path.join(TMP, "ok.ljm.zst")
open(ok_zst, "wb").write(zstd_raw_frame(prof, 0x50))
p = run(["-o", os.path.join(TMP, "ok.json"), ok_zst])
check(p.returncode == 0, "raw zstd frame: %d %r" % (p.returncode, p.stderr))
for name, data, at in (("big_window.zst", zstd_raw_frame(prof, 0xA0), 0),
                       ("second_frame.zst", zstd_raw_frame(prof[:1000], 0x50) +
                        zstd_raw_frame(prof[1000:], 0xA0), 1000)):
    path = os.path.join(TMP, name)
    open(path, "wb").write(data)
    p = run(["-o", os.path.join(TMP, "w.json"), path])
    want = "%s: byte %d: zstd window 1024 MiB exceeds the limit of 128 MiB\n" % (path, at)
    check(p.returncode == 1 and p.stderr.decode() == want, "%s: %d %r" % (name, p.returncode, p.stderr))


def reset_signals():
    for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_DFL)


def killed_midway(sig, args, out, data, ignore=None):
    """Starts ljm convert ARGS -o OUT - with half of data on stdin, waits for
    its temporary file, sends sig; returns (exit status, stderr). With
    ignore, that signal is ignored by the process, sent first and must
    not stop it."""
    def pre():
        reset_signals()
        if ignore:
            signal.signal(ignore, signal.SIG_IGN)
    folder = os.path.dirname(out)
    p = subprocess.Popen([LJM, "convert", "-q"] + args + ["-o", out, "-"], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=pre)
    p.stdin.write(data[:len(data) // 2])
    p.stdin.flush()
    deadline = time.time() + 30
    while not [f for f in os.listdir(folder) if ".tmp-" in f] and time.time() < deadline:
        time.sleep(0.01)
    check(time.time() < deadline, "%s: no temporary file while converting" % args)
    if ignore:
        p.send_signal(ignore)
        time.sleep(0.2)
        check(p.poll() is None, "%s: an ignored signal stopped the conversion" % args)
    p.send_signal(sig)
    try:
        rc = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    try:
        p.stdin.close()
    except BrokenPipeError:
        pass
    return rc, p.stderr.read()


# A signal while converting: the temporary file goes, an existing output
# stays, and the process dies of the signal. Streaming formats and the
# downgrade write from the start, so the temporary file is there while
# the rest of the profile is awaited on stdin.
SIG = os.path.join(TMP, "signals")
os.makedirs(SIG)
for sig, args, name, ignore in ((signal.SIGINT, ["-f", "heaptrack"], "out.heaptrack.gz", None),
                                (signal.SIGTERM, ["-f", "speedscope"], "out.speedscope.json", None),
                                (signal.SIGHUP, ["-f", "ljm"], "out.ljm", None),
                                (signal.SIGTERM, ["-f", "heaptrack"], "out2.heaptrack.gz",
                                 signal.SIGHUP)):
    out = os.path.join(SIG, name)
    open(out, "w").write("precious")
    rc, err = killed_midway(sig, args, out, prof, ignore)
    check(rc == -sig, "%s %s: exit %d (not killed by the signal) %r" % (sig.name, args, rc, err))
    left = [f for f in os.listdir(SIG) if ".tmp-" in f]
    check(not left, "%s %s: temporary files left behind: %s" % (sig.name, args, left))
    for f in left:
        os.remove(os.path.join(SIG, f))
    check(open(out, "rb").read() == b"precious", "%s %s: the output was touched" % (sig.name, args))

leftovers = [f for f in os.listdir(TMP) if ".tmp-" in f]
check(not leftovers, "temporary files left behind: %s" % leftovers)

sys.exit(check.done())
