#!/usr/bin/env python3
"""Golden test of `ljm report` against the reference reports, all three modes.

The reference leaves the order of tied rows undefined (doc/ljm-format.md), so
both sides are normalised the same way: inside each run of rows with equal
event counts (HEAP SUMMARY: equal byte totals) the row blocks are sorted.
Everything else must match byte for byte. Separately, our own order inside a
tie run must be the documented one: names in bytewise ascending order.

For v3 streams the reference has no --human-readable output; its expected
text is derived from the default .txt with an independent implementation of
the reference's size formatting (exact fractions, ties rounded up).
"""
import os
import re
import subprocess
import sys
from fractions import Fraction
from math import floor

ROW = re.compile(rb"^(.*): (\d+) events\t\+([^\t]+)\t-([^\t]+)$")
HEAP = re.compile(rb"^(.*) holds (\S+): (\d+) allocs, (\d+) frees$")
SECTIONS = (b"ALLOCATIONS", b"REALLOCATIONS", b"DEALLOCATIONS")


def blocks(text):
    """Splits a report into [(kind, tie key, name, bytes of the block)]."""
    lines = text.split(b"\n")
    out, i, section = [], 0, None
    while i < len(lines):
        line = lines[i]
        if line in SECTIONS or line == b"HEAP SUMMARY:" or line == b"ALIASES:":
            section = line
            out.append(("head", None, None, line))
            i += 1
            continue
        if section == b"ALIASES:":
            out.append(("raw", None, None, line))
            i += 1
            continue
        m = ROW.match(line) if section in SECTIONS else None
        if m:
            blk = [line]
            i += 1
            if i < len(lines) and lines[i] == b"\tOverrides:":
                while i < len(lines) and lines[i] != b"":
                    blk.append(lines[i])
                    i += 1
                blk.append(b"")  # the blank line closing the Overrides
                i += 1
            out.append(("row", (section, int(m.group(2))), m.group(1), b"\n".join(blk)))
            continue
        m = HEAP.match(line) if section == b"HEAP SUMMARY:" else None
        if m:
            out.append(("row", (section, m.group(2)), m.group(1), line))
            i += 1
            continue
        out.append(("raw", None, None, line))
        i += 1
    return out


def runs(bl):
    """Groups consecutive rows with the same tie key."""
    groups, cur = [], []
    for b in bl:
        if cur and (b[0] != "row" or cur[0][1] != b[1]):
            groups.append(cur)
            cur = []
        if b[0] == "row":
            cur.append(b)
        else:
            groups.append([b])
    if cur:
        groups.append(cur)
    return groups


def normalise(text):
    return b"\n".join(b"\n".join(sorted(x[3] for x in g)) for g in runs(blocks(text)))


def tie_order_errors(text):
    errs = []
    for g in runs(blocks(text)):
        names = [x[2] for x in g if x[0] == "row"]
        if names != sorted(names):
            errs.append(b" / ".join(names[:4]).decode("utf-8", "replace"))
    return errs


def hr(n):
    units = ["B", "KiB", "MiB", "GiB"]
    v, u = Fraction(n), 0
    while v >= 1024 and u < 3:
        v /= 1024
        u += 1
    if v.denominator == 1:
        return "%d%s" % (v.numerator, units[u])
    q = floor(v * 100 + Fraction(1, 2))
    return "%d.%02d%s" % (q // 100, q % 100, units[u])


def to_hr(text):
    def sub(m):
        return m.group(1) + hr(int(m.group(2))).encode()
    return re.sub(rb"(\t[+-]|holds )(\d+)B", sub, text)


def main():
    ljm, root = sys.argv[1], sys.argv[2]
    failures, checked = [], 0
    # The real reference --human-readable --leak-only capture checks to_hr itself.
    cap = open(os.path.join(root, "cli", "human_and_leak.stdout"), "rb").read()
    ref = open(os.path.join(root, "v3", "test.leak.txt"), "rb").read()
    if normalise(to_hr(ref)) != normalise(cap):
        failures.append("derived --human-readable text differs from the real capture")
    for sub in ("v3", "synthetic"):
        d = os.path.join(root, sub)
        for f in sorted(os.listdir(d)):
            if not f.endswith(".ljm") or f.startswith("err_"):
                continue
            base = os.path.join(d, f[:-4])
            for mode, opts, suffix in (("default", [], ".txt"), ("leak", ["--leak-only"], ".leak.txt"),
                                       ("hr", ["--human-readable"], ".hr.txt")):
                if os.path.exists(base + suffix):
                    want = open(base + suffix, "rb").read()
                elif mode == "hr":
                    want = to_hr(open(base + ".txt", "rb").read())
                else:
                    failures.append("%s: no reference %s" % (f, suffix))
                    continue
                p = subprocess.run([ljm, "report"] + opts + [base + ".ljm"], capture_output=True)
                checked += 1
                what = "%s/%s [%s]" % (sub, f, mode)
                if p.returncode != 0:
                    failures.append("%s: exit %d: %s" % (what, p.returncode, p.stderr.decode()))
                    continue
                if normalise(p.stdout) != normalise(want):
                    failures.append("%s: report differs from the reference" % what)
                    continue
                bad = tie_order_errors(p.stdout)
                if bad:
                    failures.append("%s: tied rows not in name order: %s" % (what, bad[0]))
    for f in failures:
        print("FAIL", f)
    print("report golden: %d comparisons, %d failures" % (checked, len(failures)))
    # A broken corpus copy must not pass quietly.
    if checked < 60:
        print("FAIL too few comparisons")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
