#!/usr/bin/env python3
"""heaptrack_test.py -- converts every corpus profile to Heaptrack files and
checks them with the real heaptrack_print.

Usage: heaptrack_test.py LJM_BINARY LJM_TOTALS_PY CORPUS_DIR...

For each .ljm file (plus a generated stream with hostile names, ljmwrite.nasty_stream())
as .heaptrack.gz (the .heaptrack.zst: the same text, and heaptrack_print's
summary of it):
  * tests/lib/ljmread.py (an independent reader) says whether the stream is valid;
    an invalid one must make `ljm convert` fail, a valid one must convert,
    and the decoder's own totals (JSON export) must agree with the reader;
  * heaptrack_print exits 0 and prints none of its error lines; its calls,
    peak and leaked summary lines equal the independent figures within
    heaptrack's rounding, and exactly through its flame graph output
    (-F, cost types allocations / peak / leaked);
  * the decompressed text obeys the rules that keep heaptrack_print safe
    (formats doc B.6): see lint();
  * on the hostile stream, the frames heaptrack shows are the cleaned names;
  * a sampled stream (testdata/ext/sampled.ljm): bytes are the reader's
    estimates, calls the samples, and the X line says so.
Then: `-o -` is refused, and a plain-text name writes plain text.
Ends with "N passed, N failed".
"""
import functools
import gzip
import os
import re
import subprocess
import sys

import export_testlib as T
from export_testlib import check

ERRORS = re.compile(r"failed to parse line|unexpected non-hex|allocation index out of "
                    r"bounds|Duplicated debuggee|not compatible|Trace recursion detected|"
                    r"Damaged timestamp")
SPECIAL = {b"main", b"__libc_start_main", b"__static_initialization_and_destruction_0"}


# T.run, undecodable output bytes replaced instead of raising.
run = functools.partial(T.run, errors="replace")


def decompress(path):
    with open(path, "rb") as fh:
        data = fh.read()
    if path.endswith(".gz"):
        return gzip.decompress(data)
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dc"], input=data, capture_output=True,
                              check=True).stdout
    return data


HEX = re.compile(rb"^[0-9a-f]+$")


def lint(text):
    """Problems in a heaptrack data file that heaptrack_print would not report
    (or would crash on). Returns a list of messages."""
    bad = []
    lines = text.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines or lines[0] != b"v 10400 3":
        bad.append("first line is not 'v 10400 3'")
    nstr = nip = ntrace = 0
    strings = {}
    infos = []          # (size, trace) per index
    first_plus = 0      # indices used by a '+' so far are 0 .. first_plus-1
    last_c = -1
    nx = 0
    for no, ln in enumerate(lines, 1):
        if not ln or ln[:1] == b"#":
            continue
        mode, rest = ln[:1], ln[2:]
        if mode == b"X":
            nx += 1
            continue
        if mode == b"s":
            m = re.match(rb"^([0-9a-f]+) (.*)$", rest, re.S)
            if not m or int(m.group(1), 16) != len(m.group(2)):
                bad.append("line %d: string size wrong: %r" % (no, ln[:80]))
                continue
            s = m.group(2)
            nstr += 1
            strings[nstr] = s
            try:
                s.decode("utf-8")
            except UnicodeDecodeError:
                bad.append("line %d: string is not UTF-8" % no)
            if b"<" in s or b">" in s or any(c < 0x20 or c == 0x7f for c in s):
                bad.append("line %d: string has angle brackets or control bytes" % no)
            continue
        fields = rest.split(b" ")
        if not all(HEX.match(f) for f in fields):
            bad.append("line %d: field not lowercase hex: %r" % (no, ln[:80]))
            continue
        v = [int(f, 16) for f in fields]
        if mode == b"i":
            nip += 1
            for k in (1, 2, 3)[:len(v) - 1]:
                if v[k] > nstr:
                    bad.append("line %d: string index %d not yet written" % (no, v[k]))
            if len(v) > 2 and strings.get(v[2]) in SPECIAL:
                bad.append("line %d: function named %r" % (no, strings[v[2]]))
        elif mode == b"t":
            ntrace += 1
            if v[0] > nip or v[1] >= ntrace:
                bad.append("line %d: trace refers forward" % no)
        elif mode == b"a":
            if v[1] > ntrace or v[1] == 0:
                bad.append("line %d: alloc info with unknown trace" % no)
            infos.append((v[0], v[1]))
        elif mode in (b"+", b"-"):
            if v[0] >= len(infos):
                bad.append("line %d: alloc index %d out of range" % (no, v[0]))
            if mode == b"+" and v[0] > first_plus:
                # heaptrack_gui's parser indexes past its counters here
                bad.append("line %d: '+ %x' before '+ %x'" % (no, v[0], first_plus))
            elif mode == b"+" and v[0] == first_plus:
                first_plus += 1
        elif mode == b"c":
            if v[0] < last_c:
                bad.append("line %d: time goes backwards" % no)
            last_c = v[0]
        elif mode not in (b"v", b"I", b"R"):
            bad.append("line %d: unexpected record %r" % (no, mode))
    if nx != 1:
        bad.append("%d X lines" % nx)
    if len(infos) > first_plus:
        bad.append("%d alloc infos never used by a '+'" % (len(infos) - first_plus))
    timed = re.search(rb"time axis: real time[;)]", text) is not None
    if timed:  # RSS in pages of 4096 bytes, no system memory
        if re.findall(rb"^I .*$", text, re.M) != [b"I 1000 0"]:
            bad.append("a timed profile needs exactly 'I 1000 0'")
    else:
        if re.search(rb"^[IR] ", text, re.M):
            bad.append("an 'I' or 'R' line: the profile knows neither memory nor RSS")
        # No time recorded: no invented time axis, and the X line says so.
        if re.search(rb"^c ", text, re.M):
            bad.append("a 'c' line in a profile without time: an invented duration")
        if not re.search(rb"^X .*no time recorded", text, re.M):
            bad.append("the X line of a profile without time does not say it has none")
    return bad


def figure(out, label):
    """A summary figure of heaptrack_print, with its K/M/G (powers of 1000)."""
    m = re.search(label + r": ([0-9.]+)([KMGT]?)", out)
    if not m:
        return None
    scale = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}[m.group(2)]
    return float(m.group(1)) * scale, scale


def near(got, want):
    """Equal within heaptrack's printed precision (up to 2 decimals of its unit)."""
    if got is None:
        return False
    value, scale = got
    return abs(value - want) <= (0.005 * scale if scale > 1 else 0.5)


def flame_sum(ht, cost, tmp):
    out = os.path.join(tmp, "flame.%s.folded" % cost)
    r = run(["heaptrack_print", "-f", ht, "-p", "0", "-a", "0", "-T", "0", "-l", "0",
             "--flamegraph-cost-type", cost, "-F", out])
    if r.returncode != 0:
        return None
    total = 0
    with open(out, "rb") as fh:
        for line in fh:
            total += int(line.rsplit(b" ", 1)[1])
    return total


def check_file(name, ht, want, tmp, checked=None):
    """Checks one Heaptrack file; returns its decompressed text. checked: the
    text of the same profile in another compression, already checked in
    full: then the text must be the same bytes, and heaptrack_print reading
    this compression is checked on its summary alone."""
    text = decompress(ht)
    if checked is not None and check(text == checked, "%s: not the text of the .gz" % name):
        r = run(["heaptrack_print", "-f", ht, "-l", "1", "-T", "1"])
        out = r.stdout + r.stderr
        m = re.search(r"calls to allocation functions: (\d+)", out)
        check(r.returncode == 0 and not ERRORS.search(out) and m and
              int(m.group(1)) == want["samples"],
              "%s: heaptrack_print rc=%d, calls %s, expected %d"
              % (name, r.returncode, m and m.group(1), want["samples"]))
        return text
    problems = lint(text)
    check(not problems, "%s: %s" % (name, "; ".join(problems[:5])))
    r = run(["heaptrack_print", "-f", ht, "-l", "1", "-T", "1"])
    out = r.stdout + r.stderr
    check(r.returncode == 0 and not ERRORS.search(out),
          "%s: heaptrack_print rc=%d: %s" % (name, r.returncode,
                                             (ERRORS.search(out) or [""])[0]))
    # One '+' per block made: in a sampled stream, per sample.
    m = re.search(r"calls to allocation functions: (\d+)", out)
    check(m and int(m.group(1)) == want["samples"],
          "%s: calls %s, expected %d" % (name, m and m.group(1), want["samples"]))
    pk = figure(out, "peak heap memory consumption")
    check(near(pk, want["peak_bytes"]),
          "%s: peak %s, expected %d" % (name, pk, want["peak_bytes"]))
    m = re.search(r"temporary memory allocations: (\d+)", out)
    check(m and int(m.group(1)) == want["temporary"],
          "%s: temporary %s, expected %d" % (name, m and m.group(1), want["temporary"]))
    rss = figure(out, r"peak RSS \(including heaptrack overhead\)")
    want_rss = (want.get("rss_max", 0) + 4095) // 4096 * 4096
    check(near(rss, want_rss), "%s: peak RSS %s, expected %d" % (name, rss, want_rss))
    lk = figure(out, "total memory leaked")
    check(near(lk, want["inuse_bytes"]),
          "%s: leaked %s, expected %d" % (name, lk, want["inuse_bytes"]))
    check("Debuggee command was: " in out, "%s: no X line shown" % name)
    if not re.search(rb"time axis: real time", text):  # no time: no invented runtime
        m = re.search(r"total runtime: ([0-9.]+)s", out)
        # (heaptrack_print shows its own minimum of 1 ms for a file with no events)
        check(m and float(m.group(1)) <= 0.001, "%s: a runtime of %s for a recording without time"
              % (name, m and m.group(1)))
    x = re.search(r"Debuggee command was: (.*)", out)
    note = T.sampled_note(want["sample_rate"])
    check(x and (("bytes are %s, allocation counts are the samples" % note in x.group(1))
                 if note else "sampled recording" not in x.group(1)),
          "%s: X line %r (rate %s)" % (name, x and x.group(1), want["sample_rate"]))
    for cost, fig in (("allocations", "samples"), ("peak", "peak_bytes"),
                      ("leaked", "inuse_bytes")):
        got = flame_sum(ht, cost, tmp)
        check(got == want[fig], "%s: flame graph %s sum %s, expected %d"
              % (name, cost, got, want[fig]))
    return text


def check_nasty(name, ht, tmp):
    """Frames of the hostile stream as heaptrack shows them."""
    out = os.path.join(tmp, "nasty.folded")
    run(["heaptrack_print", "-f", ht, "-p", "0", "-a", "0", "-T", "0", "-l", "0",
         "--flamegraph-cost-type", "allocations", "-F", out])
    with open(out, encoding="utf-8") as fh:
        lines = set(fh.read().splitlines())
    trace = re.compile("^function \\(na\\(me\\) \ufffd\ufffd\\.lua:3\\) \\(na\\(me\\) \ufffd\ufffd"
                       "\\.lua\\);TRACE \\[1\\] na\\(me\\) \ufffd\ufffd\\.lua:\\d+; 1$")
    check(any(trace.match(l) for l in lines),
          "%s: no flame graph line of TRACE [1] named after its start above its function" % name)
    for want in ("main [C]; 1", "__libc_start_main [C]; 1",
                 "operator new(unsigned long) [C]; 1", "tmpl(int)::f  x; 1"):
        check(want in lines, "%s: no flame graph line %r" % (name, want))


def main():
    ljm, tmp, nasty, cases = T.reader_cases(sys.argv[1:])
    converted = []
    for f, want in cases:
        checked = None
        for suffix in (".heaptrack.gz", ".heaptrack.zst"):
            name = os.path.relpath(f) + " " + suffix
            ht = os.path.join(tmp, os.path.basename(f) + suffix)
            if not T.convert_vs_reader(ljm, "heaptrack", ht, f, name, want):
                continue
            checked = check_file(name, ht, want, tmp, checked)
            if f == nasty:
                check_nasty(name, ht, tmp)
            converted.append((f, want))
    check(any(os.path.basename(f) == T.SAMPLED and w["sample_rate"] for f, w in converted),
          "%s was not converted as a sampled stream" % T.SAMPLED)

    if check(converted, "no profile converted"):
        f, want = max(converted, key=lambda x: x[1]["alloc_count"])
        c = run([ljm, "convert", "-f", "heaptrack", "-o", "-", f])
        check(c.returncode != 0 and c.stderr != "", "-o - was not refused")
        ht = os.path.join(tmp, "inferred.heaptrack.zst")  # format from the name
        c = run([ljm, "convert", "-o", ht, f])
        check(c.returncode == 0, "suffix .heaptrack.zst not inferred: %s" % c.stderr)
        if c.returncode == 0:
            check(subprocess.run(["zstd", "-t", "-q", ht]).returncode == 0,
                  ".heaptrack.zst is not zstd")
        ht = os.path.join(tmp, "plain.heaptrack.txt")
        c = run([ljm, "convert", "-f", "heaptrack", "-o", ht, f])
        if check(c.returncode == 0, "plain name: rc=%d %s" % (c.returncode, c.stderr)):
            with open(ht, "rb") as fh:
                check(fh.read(10) == b"v 10400 3\n", "plain name: not plain text")
            check_file("plain " + os.path.relpath(f), ht, want, tmp)

    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
