#!/usr/bin/env python3
"""pprof_test.py -- converts every corpus profile to pprof and checks it with
the real `go tool pprof`.

Usage: pprof_test.py LJM_BINARY LJM_TOTALS_PY CORPUS_DIR...

For each .ljm file, plus a generated stream with hostile names (ljmwrite.nasty_stream()):
  * tests/lib/ljmread.py (an independent reader) says whether the stream is valid;
    an invalid one must make `ljm convert` fail, a valid one must convert,
    and the decoder's own totals (JSON export) must agree with the reader;
  * `go tool pprof -raw` and `-top` (each sample type) exit 0 with nothing on
    stderr, and the totals pprof prints equal the independent figures;
  * the file names its source, opens on alloc_space, and the pseudo mapping
    is there; names hold no angle brackets or control characters;
  * a sampled stream (testdata/ext/sampled.ljm): the estimates the reader
    computes, the rate as the period and the estimates' comment line;
    exact streams have period 1 and no such line;
  * on the hostile stream: a trace sits above its start line and file,
    long names are cut.
Then the options: --value choosing the default type, suffix inference, `-o -`;
and the exact profiles merged into one (several FILEs), whose sums are the
sums of theirs, and what cannot merge refused.
Ends with "N passed, N failed".
"""
import os
import re
import subprocess
import sys

import export_testlib as T
from export_testlib import check, run

TYPES = ["alloc_objects", "alloc_space", "inuse_objects", "inuse_space", "temp_objects"]
FIGS = ["alloc_count", "alloc_bytes", "inuse_count", "inuse_bytes", "temporary"]


def types_of(want):
    """The sample types of a profile: temp_objects where ljm counts
    temporary allocations (exact streams), as the reader replays them."""
    return TYPES if not want["sample_rate"] else TYPES[:4]


def pprof(*args):
    return run(["go", "tool", "pprof"] + list(args))


def raw_sums(out):
    """Sums of each value column over the Samples section of -raw."""
    sums = [0] * len(TYPES)
    in_samples = False
    for line in out.splitlines():
        if line.startswith("Samples:"):
            in_samples = True
            continue
        if line.startswith("Locations"):
            break
        m = re.match(r"^\s+(\d+(?:\s+\d+){3,4}):", line)
        if in_samples and m:
            for i, v in enumerate(m.group(1).split()):
                sums[i] += int(v)
    return sums


def top_total(out):
    m = re.search(r"of (\d+)B? total", out)
    return int(m.group(1)) if m else None


def check_profile(name, pb, want, src):
    r = pprof("-raw", pb)
    check(r.returncode == 0 and r.stderr == "",
          "%s: pprof -raw rc=%d stderr=%r" % (name, r.returncode, r.stderr[:300]))
    sums = raw_sums(r.stdout)
    types = types_of(want)
    check(re.search(r"^PeriodType", r.stdout, re.M) and
          re.search(r"^ *" + r" +".join(t + r"/\w+(?:\[dflt\])?" for t in types) + r"\s*$", r.stdout, re.M),
          "%s: sample types are not %s" % (name, types))
    for i, fig in enumerate(FIGS[:len(types)]):
        check(T.fig_ok(want, fig, sums[i]), "%s: -raw %s sum %d, expected %d %s"
              % (name, TYPES[i], sums[i], want[fig], want.get("count_bounds", "")))
    check("Comment: LuaJIT memprof profile " + src in r.stdout,
          "%s: no comment naming the source" % name)
    check("luajit  [FN][FL][LN]" in r.stdout, "%s: no pseudo mapping" % name)
    check(not re.search(r"[<>\x00-\x08\x0b-\x1f\x7f]", r.stdout),
          "%s: names with angle brackets or control characters" % name)
    rate = want["sample_rate"]
    check("PeriodType: space bytes" in r.stdout and "\nPeriod: %d\n" % (rate or 1) in r.stdout,
          "%s: period" % name)
    note = T.sampled_note(rate)
    check(("Comment: %s\n" % note in r.stdout) if rate else "sampled recording" not in r.stdout,
          "%s: the estimates' comment (rate %s)" % (name, rate))
    for i, t in enumerate(types):
        r = pprof("-top", "-unit=B", "-sample_index=" + t, pb)
        ok = r.returncode == 0 and r.stderr == ""
        check(ok, "%s: pprof -top %s rc=%d stderr=%r"
              % (name, t, r.returncode, r.stderr[:300]))
        # -top sums in float64: exact below 2^53, one ulp above it.
        got, exp = top_total(r.stdout), want[FIGS[i]]
        lo, hi = want.get("count_bounds", {}).get(FIGS[i], (exp, exp))
        check(got is not None and lo - (lo >> 52) <= got <= hi + (hi >> 52),
              "%s: -top %s total %s, expected %d" % (name, t, got, exp))
    r = pprof("-top", pb)
    check("Type: alloc_space" in r.stdout, "%s: default type is not alloc_space" % name)


def check_nasty(pb):
    """Stack shape and name cleaning on the hostile stream."""
    r = pprof("-traces", pb)
    # A trace is shown as called from the function it starts in, named
    # module.function (module: the file without ".lua").
    check(re.search(r"TRACE \[1\] [^\n]*\.lua:4\n\s+na\(me\) \ufffd\ufffd\.function "
                    r"\(na\(me\) \ufffd\ufffd\.lua:3\)\n", r.stdout),
          "nasty: TRACE [1] not above its start site")
    r = pprof("-raw", pb)
    check("tmpl(int)::f  x" in r.stdout, "nasty: C name not cleaned as expected")
    check(re.search(r"M=1 return 1 -- x{150,199}\.\.\. ", r.stdout),
          "nasty: long name not cut")


def main():
    ljm, tmp, nasty, cases = T.reader_cases(sys.argv[1:])
    converted = []
    for f, want in cases:
        name = os.path.relpath(f)
        pb = os.path.join(tmp, os.path.basename(f) + ".pb.gz")
        if not T.convert_vs_reader(ljm, "pprof", pb, f, name, want):
            continue
        check_profile(name, pb, want, f)
        if f == nasty:
            check_nasty(pb)
        converted.append((f, want))
    check(any(os.path.basename(f) == T.SAMPLED and w["sample_rate"] for f, w in converted),
          "%s was not converted as a sampled stream" % T.SAMPLED)

    # Options, on the largest valid profile converted.
    if check(converted, "no profile converted"):
        f, want = max(converted, key=lambda x: x[1]["alloc_count"])
        for value, t in [("inuse_bytes", "inuse_space"), ("inuse_count", "inuse_objects"),
                         ("alloc_count", "alloc_objects"), ("alloc_bytes", "alloc_space")]:
            pb = os.path.join(tmp, "value_%s.pb.gz" % value)
            c = run([ljm, "convert", "-f", "pprof", "--value", value, "-o", pb, f])
            check(c.returncode == 0, "--value %s: rc=%d %s" % (value, c.returncode, c.stderr))
            r = pprof("-top", pb)
            check("Type: " + t in r.stdout, "--value %s does not open on %s" % (value, t))
        c = run([ljm, "convert", "-f", "pprof", "--value", "peak_bytes", "-o",
                 os.path.join(tmp, "peak.pb.gz"), f])
        check(c.returncode != 0 and c.stderr != "", "--value peak_bytes not refused")
        for suffix in (".pb.gz", ".pprof"):  # the format comes from the name
            pb = os.path.join(tmp, "inferred" + suffix)
            c = run([ljm, "convert", "-o", pb, f])
            check(c.returncode == 0 and pprof("-raw", pb).returncode == 0,
                  "suffix %s: not converted to pprof (%s)" % (suffix, c.stderr))
        c = subprocess.run([ljm, "convert", "-f", "pprof", "-o", "-", f],
                           capture_output=True)
        pb = os.path.join(tmp, "stdout.pb.gz")
        with open(pb, "wb") as fh:
            fh.write(c.stdout)
        check(c.returncode == 0 and c.stdout[:2] == b"\x1f\x8b",
              "-o - did not write gzip to stdout")
        check(raw_sums(pprof("-raw", pb).stdout) == [want[k] for k in FIGS],
              "-o -: totals differ")

        check_merged(ljm, tmp, converted)

    return T.summary()


def check_merged(ljm, tmp, converted):
    """Several profiles into one (ljm convert -f pprof -o OUT FILE...): the
    sums are the sums of the reader's totals, each source named; what
    cannot merge is refused."""
    exact = [(f, w) for f, w in converted if not w["sample_rate"]]
    if not check(len(exact) >= 3, "fewer than three exact profiles to merge"):
        return
    pb = os.path.join(tmp, "merged.pb.gz")
    c = run([ljm, "convert", "-q", "-f", "pprof", "-o", pb] + [f for f, _ in exact])
    if check(c.returncode == 0, "merged: rc=%d %s" % (c.returncode, c.stderr)):
        r = pprof("-raw", pb)
        want = [sum(w[k] for _, w in exact) for k in FIGS]
        check(raw_sums(r.stdout) == want, "merged: -raw sums %s, the reader's %s"
              % (raw_sums(r.stdout), want))
        named = [f for f, _ in exact if f in r.stdout]
        check(len(named) == len(exact), "merged: the comments name %d of %d sources"
              % (len(named), len(exact)))
    # Two models at a time: the same profile 200 times takes about the
    # memory of one (ru_maxrss of the child, KB). A sanitized build keeps
    # freed memory in quarantine unless told not to.
    rss = []
    env = dict(os.environ, ASAN_OPTIONS=":".join(
        x for x in (os.environ.get("ASAN_OPTIONS", ""), "quarantine_size_mb=0") if x))
    for n in (1, 200):
        p = subprocess.Popen([ljm, "convert", "-q", "-f", "pprof", "-o", pb] + [exact[0][0]] * n,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        rss.append(usage.ru_maxrss if p.returncode == 0 else -1)
    check(0 < rss[0] and 0 < rss[1] <= rss[0] * 1.5 + 2048,
          "merged 200 times: peak memory %d KB, once %d KB" % (rss[1], rss[0]))
    # Totals at 2^62 (what every view holds exactly): two of them refused.
    big = "testdata/fuzz/sum_at_2_62.ljm"
    out = os.path.join(tmp, "refused.pb.gz")
    if check(os.path.exists(big), "no %s" % big):
        c = run([ljm, "convert", "-q", "-o", out, big, big])
        check(c.returncode == 1 and "2^62" in c.stderr and not os.path.exists(out),
              "merged past 2^62: refused in one line, no output (%d %r)" % (c.returncode, c.stderr))
    two = [exact[0][0], exact[1][0]]
    for argv, rc, what in (
            (["-f", "folded", "-o", os.path.join(tmp, "m.folded")] + two, 2, "one profile at a time"),
            (["-o", out, exact[0][0], "-"], 2, "stdin"),
            (["-o", out, exact[0][0], os.path.join(tmp, "missing.ljm")], 1, "missing.ljm"),
            (["-o", out, exact[0][0], __file__], 1, os.path.basename(__file__))):
        c = run([ljm, "convert", "-q"] + argv)
        check(c.returncode == rc and what in c.stderr and not os.path.exists(out),
              "merge refused (%s): rc=%d, no output, %r" % (what, c.returncode, c.stderr))


if __name__ == "__main__":
    sys.exit(main())
