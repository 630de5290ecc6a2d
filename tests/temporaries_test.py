#!/usr/bin/env python3
"""temporaries_test.py -- temporary allocations (blocks freed right after they
were made) of a real program, in every view, against their real clients.

testdata/temp/temps.lua is recorded under the system's LuaJIT exact (-joff,
with and without --stacks; and with the JIT on) and sampled. For each exact
recording:
  * by construction (-joff): line 10 grows 200 tables from empty, 10 array
    blocks each, all but the last of each freed by the next reallocation:
    2000 allocations, 1800 temporary; line 16's tables live to the end: 0;
    the line is the program's (its source text is the loop);
  * the JSON's temp_count is the independent reader's replay of the rule
    (tests/lib/ljmread.py), in total;
  * `ljm report --temporary`: its section lists every site with temporaries,
    most first, with the JSON's figures, then the report `ljm report` prints,
    byte for byte;
  * heaptrack_print (the analysis heaptrack_gui shares) on the .heaptrack.gz:
    its total, and its MOST TEMPORARY ALLOCATIONS entries (temporary and
    total per location) are the sites' (temp_count, alloc_count);
  * go tool pprof: the temp_objects sample type sums to the total, and
    -lines -top puts temps.lua:10 first with its count;
  * Markdown's Temporary column, folded --value temp_count and speedscope's
    temp_count profile add up to the total, line 10's rows to its count.
With the JIT on, `report --temporary --traces=lines` merges each trace's row
into its start line's. The sampled recording: `report --temporary` and
`--value temp_count` are refused in one line (exit 1) saying why, the JSON
says null, pprof has no temp_objects type. Hand-made streams: the first
block freed after another free (heaptrack counts one more, as the file's
`# ljm:` line says), and a time window whose first event frees the last
block carried into it (heaptrack and ljm count it alike, with or without
a streaming view).
usage: temporaries_test.py LJM TEMP_DIR"""
import collections
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
from ljmwrite import Stream

ljm, src_dir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
chk = Checks("temporaries")
work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
shutil.copy(os.path.join(src_dir, "temps.lua"), work)
ENV = dict(os.environ, PPROF_TMPDIR=work, HOME=work)
N = 200


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, timeout=600, cwd=work, env=ENV, **kw)


def ljm_ok(*args):
    r = run([ljm] + list(args))
    chk(r.returncode == 0, "ljm %s: exit %d %s" % (" ".join(args), r.returncode, r.stderr[-300:]))
    return r.stdout


def record(name, *opts):
    out = os.path.join(work, name + ".ljm")
    r = run([ljm, "record"] + list(opts) + ["-o", out, "temps.lua", str(N)])
    ok = chk(r.returncode == 0 and os.path.exists(out),
             "ljm record %s: exit %d %s" % (" ".join(opts), r.returncode, r.stderr[-300:]))
    return out if ok else None


def site_key(s):
    """A site as heaptrack_print and pprof name its location."""
    if s["kind"] == "lua" and s["func_from"] != "builtin":
        return "%s:%d" % (s["file"], s["line"])
    return s["func"]


def heaptrack_entries(text):
    """MOST TEMPORARY ALLOCATIONS of heaptrack_print: [(temporary, total,
    location)], location "file:line" or the function's name."""
    part = text.split("MOST TEMPORARY ALLOCATIONS", 1)[-1].split("total runtime:", 1)[0]
    out = []
    for m in re.finditer(r"^(\d+) temporary allocations of (\d+) allocations in total "
                         r"\([0-9.]+%\) from\n(.*)\n(?:  at (.*)\n)?", part, re.M):
        out.append((int(m.group(1)), int(m.group(2)), m.group(4) or m.group(3)))
    return out


def check_exact(tag, path, joff):
    doc = json.loads(ljm_ok("convert", "-q", "-f", "json", "-o", "-", path) or b"{}")
    if not chk(doc.get("totals", {}).get("temp_count") is not None, "%s: no temp_count" % tag):
        return
    total = doc["totals"]["temp_count"]
    sites = doc["sites"]
    with_temp = [s for s in sites if s["temp_count"]]
    with open(path, "rb") as f:
        reader = ljmread.totals(f.read())
    chk(reader["status"] == "ok" and total == reader["temporary"] and total > 0,
        "%s: temp_count %d, the independent reader says %r" % (tag, total, reader["temporary"]))

    by_name = collections.defaultdict(lambda: [0, 0])
    for s in sites:
        by_name[s["name"]][0] += s["temp_count"]
        by_name[s["name"]][1] += s["alloc_count"]
    if joff:  # by construction
        grow, held = by_name["@temps.lua:10"], by_name["@temps.lua:16"]
        chk(grow == [9 * N, 10 * N], "%s: line 10 has %d temporary of %d allocations, built to "
            "have %d of %d" % (tag, grow[0], grow[1], 9 * N, 10 * N))
        chk(held[0] == 0 and held[1] >= N, "%s: line 16 %r, built to have none" % (tag, held))
        with open(os.path.join(work, "temps.lua")) as f:
            line = f.read().split("\n")[9]
        chk("t[i] = i" in line, "%s: line 10 is %r" % (tag, line))

    # ljm report --temporary: the section, then the reference report as is.
    plain = ljm_ok("report", "-q", path).decode("utf-8", "replace")
    text = ljm_ok("report", "-q", "--temporary", path).decode("utf-8", "replace")
    head, _, rest = text.partition("\n\n")
    chk(rest == plain, "%s: --temporary changes the reference report" % tag)
    lines = head.split("\n")
    chk(lines[0] == "TEMPORARY ALLOCATIONS: %d of %d allocations (reallocations included) freed "
        "right after they were made"
        % (total, doc["totals"]["alloc_count"]), "%s: header %r" % (tag, lines[0]))
    rows = []
    for ln in lines[1:]:
        m = re.match(r"^(.*): (\d+) temporary of (\d+) allocations \((\d+\.\d)%\)$", ln)
        if chk(m, "%s: row %r" % (tag, ln)):
            rows.append((m.group(1), int(m.group(2)), int(m.group(3))))
            chk(m.group(4) == "%.1f" % (100.0 * int(m.group(2)) / int(m.group(3))),
                "%s: share in %r" % (tag, ln))
    want = sorted(((n, t, a) for n, (t, a) in by_name.items() if t), key=lambda r: (-r[1], r[0]))
    chk(rows == want, "%s: report rows %r, the JSON's %r" % (tag, rows[:4], want[:4]))

    if not joff:  # --traces=lines: traces at their start lines
        lines = ljm_ok("report", "-q", "--temporary", "--traces=lines", path).decode("utf-8", "replace")
        merged = collections.defaultdict(lambda: [0, 0])
        for s in sites:
            name = s["name"]
            if s["kind"] == "trace" and s["trace_start"] is not None and \
                    sites[s["trace_start"]]["kind"] != "trace":
                name = re.sub(r"^TRACE \[\d+\] started at ", "", name)
            merged[name][0] += s["temp_count"]
            merged[name][1] += s["alloc_count"]
        got = [(m.group(1), int(m.group(2)), int(m.group(3))) for m in re.finditer(
            r"^(.*): (\d+) temporary of (\d+) allocations", lines.split("\n\n")[0], re.M)]
        want = sorted(((n, t, a) for n, (t, a) in merged.items() if t), key=lambda r: (-r[1], r[0]))
        chk(got == want and not any(n.startswith("TRACE [") for n, _, _ in got if
                                    re.search(r"started at @temps", n)),
            "%s: --traces=lines rows %r, merged JSON %r" % (tag, got[:3], want[:3]))

    # heaptrack_print: the same figures per location, and in total.
    ht = os.path.join(work, tag + ".heaptrack.gz")
    ljm_ok("convert", "-q", "-o", ht, path)
    r = run(["heaptrack_print", "-f", ht, "-T", "1", "-n", "100000", "-p", "0", "-a", "0",
             "-l", "0"])
    out = r.stdout.decode("utf-8", "replace")
    m = re.search(r"temporary memory allocations: (\d+)", out)
    chk(r.returncode == 0 and m and int(m.group(1)) == total,
        "%s: heaptrack_print says %s temporary allocations, ljm %d" % (tag, m and m.group(1), total))
    loc = collections.defaultdict(lambda: [0, 0])
    for s in with_temp:
        loc[site_key(s)][0] += s["temp_count"]
        loc[site_key(s)][1] += s["alloc_count"]
    got = sorted(heaptrack_entries(out))
    want = sorted((t, a, k) for k, (t, a) in loc.items())
    chk(got == want and got, "%s: heaptrack_print's temporary entries %r, ljm's %r"
        % (tag, got[:4], want[:4]))

    # pprof: temp_objects.
    pb = os.path.join(work, tag + ".pb.gz")
    ljm_ok("convert", "-q", "-o", pb, path)
    r = run(["go", "tool", "pprof", "-lines", "-top", "-sample_index=temp_objects", pb])
    out = r.stdout.decode("utf-8", "replace")
    m = re.search(r"of (\d+) total", out)
    chk(r.returncode == 0 and m and int(m.group(1)) == total,
        "%s: pprof temp_objects total %s, ljm %d" % (tag, m and m.group(1), total))
    first = re.search(r"^\s+(\d+)\s+[0-9.]+%\s+[0-9.]+%\s+\d+\s+[0-9.]+%\s+(.*)$", out, re.M)
    top = max(loc.items(), key=lambda kv: kv[1][0])
    chk(first and int(first.group(1)) == top[1][0] and top[0] in first.group(2),
        "%s: pprof's first line %r, ljm's %r" % (tag, first and first.group(0), top))

    # Markdown, folded, speedscope.
    md = ljm_ok("convert", "-q", "-f", "markdown", "-o", "-", path).decode("utf-8")
    temps = [int(m.group(1).replace(",", "")) for m in
             re.finditer(r"^\| [0-9,]+ \| ([0-9,]+) \| [0-9,]+ \| ", md, re.M)]
    chk("| Allocations | Temporary | Total size | Context |" in md and sum(temps) == total,
        "%s: Markdown's Temporary column adds up to %d, ljm %d" % (tag, sum(temps), total))
    folded = ljm_ok("convert", "-q", "-f", "folded", "--value", "temp_count", "-o", "-", path)
    vals = [(ln.rsplit(b" ", 1)[0], int(ln.rsplit(b" ", 1)[1])) for ln in folded.splitlines()]
    chk(sum(v for _, v in vals) == total and all(v > 0 for _, v in vals),
        "%s: folded --value temp_count adds up to %d, ljm %d" % (tag, sum(v for _, v in vals), total))
    if joff:
        line10 = sum(v for k, v in vals if k.endswith(b"temps.lua:10"))
        chk(line10 == 9 * N, "%s: folded: %d at temps.lua:10" % (tag, line10))
    ss = json.loads(ljm_ok("convert", "-q", "-f", "speedscope", "--value", "temp_count", "-o", "-",
                           path) or b"{}")
    prof = [p for p in ss.get("profiles", []) if p["name"].startswith("temp_count: ")]
    chk(len(prof) == 1 and sum(prof[0]["weights"]) == total and
        ss["profiles"][ss["activeProfileIndex"]] is prof[0],
        "%s: speedscope's temp_count profile" % tag)


def check_sampled(path):
    doc = json.loads(ljm_ok("convert", "-q", "-f", "json", "-o", "-", path) or b"{}")
    chk(doc.get("totals", {}).get("temp_count", 0) is None and
        all(s["temp_count"] is None for s in doc.get("sites", [])),
        "sampled: the JSON's temp_count is not null")
    for args in (["report", "--temporary", path],
                 ["convert", "-f", "folded", "--value", "temp_count", "-o", "-", path],
                 ["convert", "-f", "pprof", "--value", "temp_count", "-o", "x.pb.gz", path]):
        r = run([ljm] + args)
        err = r.stderr.decode("utf-8", "replace")
        chk(r.returncode == 1 and err.count("\n") == 1 and "sampled recording" in err and
            not r.stdout, "sampled: ljm %s: exit %d %r" % (" ".join(args), r.returncode, err))
    chk(not os.path.exists(os.path.join(work, "x.pb.gz")), "sampled: a refused pprof file was written")
    pb = os.path.join(work, "sampled.pb.gz")
    ljm_ok("convert", "-q", "-o", pb, path)
    r = run(["go", "tool", "pprof", "-raw", pb])
    out = r.stdout.decode("utf-8", "replace")
    chk(r.returncode == 0 and "inuse_space/bytes" in out and "temp_objects" not in out,
        "sampled: pprof sample types")


def heaptrack_count(path, *opts):
    """heaptrack_print's total temporaries of the file ljm writes for path,
    and what its `# ljm:` line says it miscounts."""
    ht = os.path.join(work, os.path.basename(path) + ".heaptrack.gz")
    ljm_ok("convert", "-q", *opts, "-o", ht, path)
    r = run(["heaptrack_print", "-f", ht, "-p", "0", "-a", "0", "-T", "0", "-l", "0"])
    m = re.search(r"temporary memory allocations: (\d+)", r.stdout.decode())
    with gzip.open(ht) as f:
        x = re.search(rb"\n# ljm: (\d+) free\(s\) of the first block", f.read())
    return int(m.group(1)) if m else None, int(x.group(1)) if x else 0


def json_count(path, *opts):
    doc = json.loads(ljm_ok("convert", "-q", *opts, "-f", "json", "-o", "-", path) or b"{}")
    return doc.get("totals", {}).get("temp_count")


# The first block freed after another free: no place in heaptrack's format.
s = Stream()
s.proto(0x100, b"@a.lua", 1)
s.alloc("lua", (0x100, 1), 0x10, 8)
s.alloc("lua", (0x100, 2), 0x20, 8)
s.free("lua", (0x100, 3), 0x20, 8)
s.free("lua", (0x100, 3), 0x10, 8)
lifo = os.path.join(work, "lifo.ljm")
with open(lifo, "wb") as f:
    f.write(s.data())
ht, extra = heaptrack_count(lifo)
chk(json_count(lifo) == 1 and ht == 2 and extra == 1,
    "first block freed after a free: ljm 1, heaptrack %r with %d said in the file" % (ht, extra))

# A window whose first event frees the block carried in last.
s = Stream(flags=2)
s.proto(0x100, b"@a.lua", 1)
s.time(0)
s.alloc("lua", (0x100, 1), 0x10, 8)
s.time(10000)
s.free("lua", (0x100, 2), 0x10, 8)
s.alloc("lua", (0x100, 2), 0x20, 16)
s.time(20000)
win = os.path.join(work, "window.ljm")
with open(win, "wb") as f:
    f.write(s.data())
ht, extra = heaptrack_count(win, "--from", "0.005")
got = json_count(win, "--from", "0.005")
md = ljm_ok("convert", "-q", "--from", "0.005", "-f", "markdown", "-o", "-", win).decode()
chk(got == 1 and ht == 1 and extra == 0 and "(1 temporary)" in md,
    "a window's first free of the last carried block: JSON %r, Markdown %r, heaptrack %r"
    % (got, md.strip().split("\n")[-1], ht))

for tag, opts, joff in (("joff", ["-joff"], True), ("joff-stacks", ["-joff", "--stacks"], True),
                        ("jit", [], False), ("jit-stacks", ["--stacks"], False)):
    p = record(tag, *opts)
    if p:
        check_exact(tag, p, joff)
p = record("sampled", "--sample", "4096", "--sample-seed", "7")
if p:
    check_sampled(p)
sys.exit(chk.done(60))
