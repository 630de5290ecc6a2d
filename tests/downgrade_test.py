#!/usr/bin/env python3
"""downgrade_test.py -- `ljm convert -f ljm`: the standard stream of an
extended one (decoder/EXTENSION.md, Downgrade).

For every corpus stream (the reference's, the synthetic ones and the
extended testdata/ext streams):
  * the output is a standard stream: flags byte 0, no header above 0x13
    (walked here with an independent reader), and every event and symbol
    entry of the input in the same order with the same values;
  * `ljm report` prints exactly the same for the input and its downgrade,
    in all three modes;
  * a reference stream comes out byte for byte as it went in (the reference
    writes minimal ULEB128s, and so does the downgrade);
  * a sampled stream comes out as its raw samples (a reallocation after
    0x31 as a free of its old block), which `ljm convert` says on stderr,
    and only its own report is marked SAMPLED.
And: an extended stream cut short is written as far as it goes (no end
marker, exit 0 and a warning; --strict refuses it); a version 1 stream is
refused; `-o x.ljm` picks the format by name.

usage: downgrade_test.py LJM TESTDATA_DIR
"""
import functools
import glob
import os
import sys
import tempfile

import ljmread
import testlib
from checks import Checks

check = Checks("downgrade_test")
LJM = os.path.abspath(sys.argv[1])
DATA = os.path.abspath(sys.argv[2])


class Walk(ljmread.Reader):
    """Reads a stream into its items: ("sym", bytes) for symbol entries and
    events of the standard format, ("ext", header) for extension items.
    Bytes, numbers and strings as ljmread reads them (Truncated where the
    data ends), numbers kept whole."""

    def wide(self, v, start):
        return v

    def items(self):
        """(flags, [item], complete) of a version 3 stream."""
        out = []
        assert self.d[:4] == b"ljs\x03"
        self.i = 7
        try:
            while True:
                h = self.byte()
                if h & 0x80:
                    break
                t = h & 3
                if t == 0:
                    out.append(("sym", (0, self.uleb(), self.string(), self.uleb())))
                elif t == 1:
                    out.append(("sym", (1, self.uleb(), self.string())))
                elif t == 2:
                    out.append(("sym", (2, self.uleb(), self.uleb(), self.uleb())))
            assert self.d[self.i:self.i + 4] == b"ljm\x03"
            flags = self.d[self.i + 4]
            self.i += 7
            freed = False  # after 0x31: the reallocation frees its old block
            while True:
                h = self.byte()
                if h == 0x80:
                    return flags, out, True
                if h == 0x30:  # the rate of a sampled stream
                    self.uleb()
                    out.append(("ext", h))
                    continue
                if h == 0x31:
                    freed = True
                    out.append(("ext", h))
                    continue
                if 0x20 <= h <= 0x23:
                    if h == 0x20:
                        self.uleb()
                        k = self.byte()
                        if k == 1:
                            self.uleb(); self.uleb()
                        elif k in (2, 3):
                            self.uleb()
                    else:
                        self.uleb()
                    out.append(("ext", h))
                    continue
                if 0x24 <= h <= 0x2F:  # function names and later annotations: len, body
                    self.take(self.uleb())
                    out.append(("ext", h))
                    continue
                assert h <= 0x13, "header 0x%x" % h
                kind, src = h & 3, h & 0x1C
                if kind == 0:
                    if src == 0x08:
                        out.append(("sym", (8, self.uleb(), self.string(), self.uleb())))
                    elif src == 0x0C:
                        out.append(("sym", (12, self.uleb(), self.string())))
                    elif src == 0x10:
                        out.append(("sym", (16, self.uleb(), self.uleb(), self.uleb())))
                    continue
                loc = ()
                if src == 0x08:
                    loc = (self.uleb(), self.uleb())
                elif src in (0x0C, 0x10):
                    loc = (self.uleb(),)
                vals = [self.uleb() for _ in range({1: 2, 2: 2, 3: 4}[kind])]
                if freed:
                    h, vals, freed = h - 1, vals[:2], False
                out.append(("sym", (h,) + loc + tuple(vals)))
        except ljmread.Truncated:
            return None, out, False


run = functools.partial(testlib.run_ljm, LJM, timeout=None)  # run(args)


def report(path, mode):
    return run(["report"] + mode + [path]).stdout


def main():
    tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    out = os.path.join(tmp, "down.ljm")
    streams = sorted(glob.glob(os.path.join(DATA, "v3", "*.ljm")) +
                     glob.glob(os.path.join(DATA, "ext", "*.ljm")) +
                     glob.glob(os.path.join(DATA, "synthetic", "syn_*.ljm")))
    check(len(streams) >= 20, "corpus too small: %d" % len(streams))
    extended = 0
    for src in streams:
        name = os.path.relpath(src, DATA)
        p = run(["convert", "-f", "ljm", "-o", out, src])
        check(p.returncode == 0, "%s: exit %d: %s" % (name, p.returncode, p.stderr))
        if p.returncode != 0:
            continue
        with open(src, "rb") as fh:
            data_in = fh.read()
        with open(out, "rb") as fh:
            data_out = fh.read()
        flags_in, items_in, _ = Walk(data_in).items()
        flags_out, items_out, complete = Walk(data_out).items()
        extended += flags_in != 0
        check(complete and flags_out == 0, "%s: output not a complete standard stream" % name)
        check(all(k == "sym" for k, _ in items_out), "%s: extension items left" % name)
        check(items_out == [x for x in items_in if x[0] == "sym"],
              "%s: events or symbols differ from the input's" % name)
        if name.startswith("v3/"):
            check(data_out == data_in, "%s: reference stream not kept byte for byte" % name)
        sampled = flags_in is not None and flags_in & 4
        check((b"raw samples" in p.stderr) == bool(sampled), "%s: stderr %r" % (name, p.stderr))
        for mode in ([], ["--leak-only"], ["--human-readable"]):
            if sampled:  # estimates, then the raw samples
                check(report(src, mode).startswith(b"SAMPLED: ") and
                      not report(out, mode).startswith(b"SAMPLED"), "%s %s: reports" % (name, mode))
            else:
                check(report(src, mode) == report(out, mode), "%s %s: reports differ" % (name, mode))
    check(extended >= 1, "no extended stream in the corpus")

    # A cut extended stream: written as far as it goes.
    ext = os.path.join(DATA, "ext", "stacked.ljm")
    with open(ext, "rb") as fh:
        data = fh.read()
    cut = os.path.join(tmp, "cut.ljm")
    with open(cut, "wb") as fh:
        fh.write(data[:len(data) * 2 // 3])
    p = run(["convert", "-o", out, cut])  # format from the name
    check(p.returncode == 0 and b"warning" in p.stderr and p.stderr.count(b"\n") == 1,
          "cut stream: exit %d, %r" % (p.returncode, p.stderr))
    with open(out, "rb") as fh:
        flags, items, complete = Walk(fh.read()).items()
    check(not complete and items, "cut stream: output should be cut too")
    p = run(["convert", "--strict", "-o", out, cut])
    check(p.returncode == 1, "cut stream with --strict: exit %d" % p.returncode)

    # Older versions are refused, with nothing left behind.
    v1 = os.path.join(tmp, "v1.ljm")
    with open(v1, "wb") as fh:
        fh.write(b"ljs\x01\x00\x00\x00\x80ljm\x01\x00\x00\x00\x80")
    gone = os.path.join(tmp, "never.ljm")
    p = run(["convert", "-o", gone, v1])
    check(p.returncode == 1 and b"version 3" in p.stderr and not os.path.exists(gone),
          "v1 stream: exit %d, %r" % (p.returncode, p.stderr))
    return check.done(minimum=100)


if __name__ == "__main__":
    sys.exit(main())
