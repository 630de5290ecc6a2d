#!/usr/bin/env python3
"""filters_test.py -- --size, --function, --source and their --not- forms in
report, convert (JSON, pprof, heaptrack, folded, SVG, speedscope, Markdown),
growth and top, on a real program, against their real clients.

testdata/filter/filters.lua (with filters_lib.lua) is recorded under the
system's LuaJIT with -joff, with and without --stacks, and sampled:
  * by construction: --function '^render$' keeps render's 200 strings of
    2000 bytes and more and nothing outside render; --source filters_lib
    keeps lib.parse's 300 tables and nothing outside that file;
  * each frame filter against the unfiltered JSON: a node (a site without
    stacks) whose path has a matching frame keeps its allocations and its
    blocks in use exactly, any other node has none; a filter and its
    --not- form add up to the whole (sampled: the estimates too, so the
    sample coin does not move with a filter);
  * --size against the independent reader (tests/lib/ljmread.py) replaying
    the filter's rule on the raw events: allocations, bytes, in use, peak,
    temporaries and the events left out;
  * every view says which filter made it (report's FILTER line, JSON,
    pprof's comments, heaptrack's, SVG's subtitle, speedscope's name,
    Markdown, growth, top) and its figures are the JSON's: go tool pprof's
    total, heaptrack_print's allocations, folded's sum;
  * usage errors name the option in one line, exit 2: a regex that does not
    compile, an empty or unreadable range; -f ljm and a heap snapshot refuse.
usage: filters_test.py LJM FILTER_DIR"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import ljmread
from checks import Checks

ljm, src_dir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
chk = Checks("filters")
work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
for name in ("filters.lua", "filters_lib.lua"):
    shutil.copy(os.path.join(src_dir, name), work)
ENV = dict(os.environ, PPROF_TMPDIR=work, HOME=work)
FIGS = ("alloc_count", "alloc_bytes", "inuse_count", "inuse_bytes")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, timeout=600, cwd=work, env=ENV, **kw)


def ljm_ok(*args):
    r = run([ljm] + list(args))
    chk(r.returncode == 0, "ljm %s: exit %d %s" % (" ".join(map(str, args)), r.returncode,
                                                   r.stderr[-300:]))
    return r.stdout


def record(name, *opts, spread="0"):
    out = os.path.join(work, name + ".ljm")
    r = run([ljm, "record", "-joff"] + list(opts) + ["-o", out, "filters.lua", spread])
    ok = chk(r.returncode == 0 and os.path.exists(out),
             "ljm record %s: exit %d %s" % (" ".join(opts), r.returncode, r.stderr[-300:]))
    return out if ok else None


def as_json(path, *filt):
    return json.loads(ljm_ok("convert", "-q", "-f", "json", "-o", "-", *filt, path) or b"{}")


def paths(doc):
    """Each node's path of frames, outermost first: ((function, file), ...),
    and its self figures, by path."""
    sites, nodes = doc["sites"], doc["nodes"]
    out = {}
    for n in nodes:
        frames, k = [], n
        while k is not None:
            s = sites[k["site"]] if k["site"] is not None else {"func": k["kind"], "file": ""}
            frames.append((s["func"], s["file"], s.get("line")))
            k = nodes[k["parent"]] if k["parent"] is not None else None
        key = tuple(reversed(frames))
        fig = out.setdefault(key, dict.fromkeys(FIGS, 0))
        for f in FIGS:
            fig[f] += n["self"][f]
    return out


def check_frames(tag, path, opt, regex, field):
    """opt (--function or --source) and its --not- form against the
    unfiltered JSON, node by node."""
    whole = as_json(path)
    base = paths(whole)
    pos = as_json(path, opt, regex)
    neg = as_json(path, "--not-" + opt[2:], regex)
    want_note = "only blocks with a frame whose %s matches '%s'" % (field, regex)
    chk(pos["stream"]["filter"] == want_note and
        neg["stream"]["filter"] == want_note.replace("with a frame", "with no frame"),
        "%s %s: JSON filter %r / %r" % (tag, opt, pos["stream"]["filter"], neg["stream"]["filter"]))
    idx = 0 if field == "function" else 1
    rx = re.compile(regex)
    for doc, keep in ((pos, True), (neg, False)):
        got = paths(doc)
        bad = []
        for key, fig in base.items():
            hit = any(f[idx] is not None and rx.search(f[idx]) for f in key)
            g = got.get(key, dict.fromkeys(FIGS, 0))
            for f in ("alloc_count", "alloc_bytes", "inuse_count", "inuse_bytes"):
                if g[f] != (fig[f] if hit == keep else 0):
                    bad.append((key[-1], f, g[f], fig[f], hit))
        chk(not bad, "%s %s%s: nodes differ from the unfiltered ones: %r"
            % (tag, "" if keep else "--not-", opt, bad[:3]))
    for f in FIGS:
        chk(pos["totals"][f] + neg["totals"][f] == whole["totals"][f],
            "%s %s: %s %d + %d != %d" % (tag, opt, f, pos["totals"][f], neg["totals"][f],
                                         whole["totals"][f]))
    chk(pos["stream"]["filtered_out_events"] > 0 and neg["stream"]["filtered_out_events"] > 0,
        "%s %s: events left out" % (tag, opt))
    return pos


def check_construction(tag, path):
    doc = check_frames(tag, path, "--function", "^render$", "function")
    t = doc["totals"]
    chk(t["alloc_count"] >= 200 and t["alloc_bytes"] >= 200 * 2000 and t["inuse_count"] >= 200,
        "%s: render kept %r, built to make 200 strings of 2000 bytes" % (tag, t))
    with open(os.path.join(work, "filters.lua")) as f:
        chk('string.rep("r", 2000)' in f.read().split("\n")[11], "%s: line 12" % tag)
    lines = {s["line"] for s in doc["sites"] if s["alloc_count"] and s["file"] == "filters.lua"}
    chk(lines == {12}, "%s: --function render keeps lines %r, built to keep 12" % (tag, lines))
    doc = check_frames(tag, path, "--source", "filters_lib", "source file")
    files = {s["file"] for s in doc["sites"] if s["alloc_count"] and s["kind"] == "lua"}
    chk(doc["totals"]["alloc_count"] >= 300 and files == {"./filters_lib.lua"},
        "%s: --source filters_lib keeps %d allocations in %r" % (tag, doc["totals"]["alloc_count"],
                                                                 files))


def same_as_reader(what, doc, want):
    """The JSON's totals and the events it left out against the independent
    reader's replay of the same filter."""
    t = doc["totals"]
    got = dict((k, t[k]) for k in FIGS + ("peak_bytes", "peak_count", "temp_count"))
    got["dropped"] = doc["stream"]["filtered_out_events"]
    exp = dict((k, want[k]) for k in FIGS + ("peak_bytes", "peak_count"))
    exp["temp_count"] = want["temporary"]
    exp["dropped"] = want["dropped"]
    chk(want["status"] == "ok" and got == exp,
        "%s: %r, the independent reader %r" % (what, got, exp))


def check_size(tag, path, lo, hi, arg):
    doc = as_json(path, "--size", arg)
    with open(path, "rb") as f:
        same_as_reader("%s --size %s" % (tag, arg), doc, ljmread.totals(f.read(), size=(lo, hi)))
    return doc


def check_fates(tag, path, timed):
    """--lifetime and --lived against the independent reader's fates, and
    what each must hold on its own."""
    with open(path, "rb") as f:
        data = f.read()
    whole = as_json(path)["totals"]
    got = {}
    runs = [("--lifetime", k, ljmread.FateKeep(data, lifetime=k))
            for k in ("leaked", "temporary", "freed")]
    if timed:
        runs += [("--lived", "..2ms", ljmread.FateKeep(data, lived=(0, 2000))),
                 ("--lived", "2001us..", None)]
    for opt, arg, keep in runs:
        if arg == "2001us..":  # not a duration ljm reads: the complement, by hand
            arg, keep = "2.001ms..", ljmread.FateKeep(data, lived=(2001, 1 << 64))
        doc = as_json(path, opt, arg)
        same_as_reader("%s %s %s" % (tag, opt, arg), doc, ljmread.totals(data, keep=keep))
        got[arg] = doc["totals"]
    lk, tp, fr = got["leaked"], got["temporary"], got["freed"]
    chk(lk["inuse_count"] == lk["alloc_count"] > 0 and lk["inuse_bytes"] == lk["alloc_bytes"],
        "%s: --lifetime leaked: every block kept is in use at the end (%r)" % (tag, lk))
    chk(fr["inuse_count"] == 0 and tp["inuse_count"] == 0 and fr["alloc_count"] > 0,
        "%s: --lifetime freed/temporary: nothing in use at the end" % tag)
    chk(tp["temp_count"] == tp["alloc_count"] > 0 and tp["alloc_count"] <= fr["alloc_count"],
        "%s: --lifetime temporary: every block kept counts as temporary (%r)" % (tag, tp))
    for f in ("alloc_count", "alloc_bytes"):
        chk(lk[f] + fr[f] == whole[f], "%s: leaked + freed %s: %d + %d != %d"
            % (tag, f, lk[f], fr[f], whole[f]))
    if timed:
        a, b = got["..2ms"], got["2.001ms.."]
        chk(a["alloc_count"] + b["alloc_count"] == whole["alloc_count"],
            "%s: --lived ..2ms and 2.001ms.. add up" % tag)


def check_site_leaked(tag, path):
    """--site-leaked: a line passes when at least that share of the blocks
    it made is in use at the end; its own figures are then the unfiltered
    ones, and a line that does not pass has none."""
    whole = as_json(path)
    by_name = {}  # sites of one name (several functions on a line) are one line
    for s in whole["sites"]:
        n = by_name.setdefault(s["name"], [0, 0])
        n[0] += s["alloc_count"]
        n[1] += s["inuse_count"]
    for pct in (90, 50, 0.5):
        doc = as_json(path, "--site-leaked", str(pct))
        passing = {k for k, (a, u) in by_name.items() if a and 100 * u >= pct * a}
        got = {}
        for x in doc["sites"]:
            got[x["name"]] = got.get(x["name"], 0) + x["alloc_count"]
        bad = [(k, got.get(k, 0), a) for k, (a, u) in by_name.items()
               if got.get(k, 0) != (a if k in passing else 0)]
        chk(not bad and passing, "%s --site-leaked %s: lines %r" % (tag, pct, bad[:3]))
        chk(doc["stream"]["filter"] == "only blocks from lines where at least %g%% of the blocks "
            "made are still in use at the end" % pct, "%s: note %r" % (tag, doc["stream"]["filter"]))
    names = {s["name"] for s in as_json(path, "--site-leaked", "90")["sites"] if s["alloc_count"]}
    chk("@filters.lua:12" in names and "@filters.lua:16" not in names,
        "%s --site-leaked 90: render's line kept, scratch's left out: %r" % (tag, sorted(names)))


def check_views(tag, path):
    filt = ("--function", "^render$")
    doc = as_json(path, *filt)
    note = doc["stream"]["filter"]
    dropped = doc["stream"]["filtered_out_events"]
    text = ljm_ok("report", "-q", *filt, path).decode()
    chk(text.startswith("FILTER: %s (%s other events left out)\n\n" % (note, "{:,}".format(dropped))),
        "%s: report's first line %r" % (tag, text[:120]))
    pb = os.path.join(work, tag + ".pb.gz")
    ljm_ok("convert", "-q", *filt, "-o", pb, path)
    r = run(["go", "tool", "pprof", "-top", "-sample_index=alloc_objects", pb])
    out = r.stdout.decode("utf-8", "replace")
    m = re.search(r"of (\d+) total", out)
    chk(r.returncode == 0 and m and int(m.group(1)) == doc["totals"]["alloc_count"],
        "%s: pprof alloc_objects total %s, JSON %d" % (tag, m and m.group(1),
                                                        doc["totals"]["alloc_count"]))
    r = run(["go", "tool", "pprof", "-comments", pb])
    chk(note in r.stdout.decode("utf-8", "replace"), "%s: pprof's comments lack the filter" % tag)
    ht = os.path.join(work, tag + ".heaptrack.gz")
    ljm_ok("convert", "-q", *filt, "-o", ht, path)
    r = run(["heaptrack_print", "-f", ht, "-p", "0", "-a", "0", "-T", "0", "-l", "0"])
    m = re.search(r"calls to allocation functions: (\d+)", r.stdout.decode())
    chk(r.returncode == 0 and m and int(m.group(1)) == doc["totals"]["alloc_count"],
        "%s: heaptrack_print counts %s allocations, JSON %d" % (tag, m and m.group(1),
                                                                 doc["totals"]["alloc_count"]))
    import gzip
    with gzip.open(ht) as f:
        chk(note.encode() in f.read(4096), "%s: heaptrack's comment lacks the filter" % tag)
    folded = ljm_ok("convert", "-q", *filt, "-f", "folded", "--value", "alloc_bytes", "-o", "-",
                    path)
    total = sum(int(ln.rsplit(b" ", 1)[1]) for ln in folded.splitlines())
    chk(total == doc["totals"]["alloc_bytes"] and all(b"render" in ln for ln in folded.splitlines()),
        "%s: folded adds up to %d, JSON %d" % (tag, total, doc["totals"]["alloc_bytes"]))
    svg = ljm_ok("convert", "-q", *filt, "-f", "svg", "-o", "-", path)
    texts = "".join(ET.fromstring(svg).itertext())
    chk(note in texts, "%s: the SVG does not say the filter" % tag)
    ss = json.loads(ljm_ok("convert", "-q", *filt, "-f", "speedscope", "-o", "-", path) or b"{}")
    chk(note in ss.get("name", ""), "%s: speedscope's name %r" % (tag, ss.get("name")))
    md = ljm_ok("convert", "-q", *filt, "-f", "markdown", "-o", "-", path).decode()
    chk("Filter: %s (%s other events left out)." % (note, "{:,}".format(dropped)) in md,
        "%s: Markdown lacks the filter" % tag)
    top = ljm_ok("top", "--once", *filt, path).decode()
    chk(note in top, "%s: ljm top lacks the filter: %r" % (tag, top[:200]))


plain = record("plain")
stacks = record("stacks", "--stacks")
sampled = record("sampled", "--stacks", "--sample", "4096")
if plain and stacks:
    check_construction("stacks", stacks)
    check_construction("plain", plain)
    for path, tag in ((stacks, "stacks"), (plain, "plain")):
        check_size(tag, path, 1024, 1 << 64, "1K..")
        check_size(tag, path, 0, 64, "..64")
        check_size(tag, path, 40, 40, "40")
        small = check_size(tag, path, 33, 4096, "33..4KiB")
        chk(small["stream"]["filter"] == "only blocks of 33 B to 4 KiB", "%s: note %r"
            % (tag, small["stream"]["filter"]))
    check_views("stacks", stacks)
    check_fates("stacks", stacks, True)
    check_fates("plain", plain, False)
    check_site_leaked("plain", plain)
    # by construction: render's strings and lib.parse's tables live to the end, scratch's do not
    lk = as_json(stacks, "--lifetime", "leaked")
    by_line = {}
    for x in lk["sites"]:
        if x["file"] == "filters.lua":
            by_line[x["line"]] = by_line.get(x["line"], 0) + x["alloc_count"]
    chk(by_line.get(12, 0) >= 200 and by_line.get(16, 0) == 0,
        "--lifetime leaked: line 12 keeps %d (200 built), line 16 %d (none built)"
        % (by_line.get(12, 0), by_line.get(16, 0)))
    text = ljm_ok("report", "-q", "--lifetime", "leaked", stacks).decode()
    chk(text.startswith("FILTER: only blocks still in use at the end ("), "report: %r" % text[:100])
    pb = os.path.join(work, "leaked.pb.gz")
    ljm_ok("convert", "-q", "--lifetime", "leaked", "-o", pb, stacks)
    r = run(["go", "tool", "pprof", "-top", "-unit=B", "-sample_index=inuse_space", pb])
    m = re.search(r"of (\d+)B? total", r.stdout.decode("utf-8", "replace"))
    chk(m and int(m.group(1)) == lk["totals"]["inuse_bytes"],
        "pprof --lifetime leaked: inuse_space total %s, JSON %d" % (m and m.group(1),
                                                                   lk["totals"]["inuse_bytes"]))
    ht = os.path.join(work, "leaked.heaptrack.gz")
    ljm_ok("convert", "-q", "--lifetime", "leaked", "-o", ht, stacks)
    r = run(["heaptrack_print", "-f", ht, "-p", "0", "-a", "0", "-T", "0", "-l", "0"])
    m = re.search(r"calls to allocation functions: (\d+)", r.stdout.decode())
    chk(m and int(m.group(1)) == lk["totals"]["alloc_count"],
        "heaptrack_print --lifetime leaked: %s allocations, JSON %d"
        % (m and m.group(1), lk["totals"]["alloc_count"]))
    # report without stacks names functions from the sources, as convert does
    rows = re.findall(r"^(@\S+): \d+ events", ljm_ok("report", "-q", "--function", "^render$",
                                                     plain).decode().split("\n\n")[1], re.M)
    chk(rows == ["@filters.lua:12"], "plain: report --function render rows %r" % rows)
    both = as_json(stacks, "--size", "1K..", "--function", "render")
    chk(both["stream"]["filter"] == "only blocks of 1 KiB or more, with a frame whose function "
        "matches 'render'" and 200 <= both["totals"]["alloc_count"] < 210,
        "filters add up: %r %r" % (both["stream"]["filter"], both["totals"]["alloc_count"]))
    # growth: render's strings made over 1.2 s grow steadily; the filter
    # that keeps them keeps the line, the one that leaves them out drops it.
    slow = record("slow", "--stacks", spread="1.2")
    if slow:
        g = json.loads(ljm_ok("growth", "-q", "--json", "--size", "1K..", slow) or b"{}")
        lines = [(x["file"], x["line_number"]) for x in g.get("lines", [])]
        chk(g.get("filter") == "only blocks of 1 KiB or more" and lines[:1] == [("filters.lua", 12)],
            "growth --size 1K..: filter %r, lines %r" % (g.get("filter"), lines))
        g = json.loads(ljm_ok("growth", "-q", "--json", "--not-function", "render", slow) or b"{}")
        lines = [(x["file"], x["line_number"]) for x in g.get("lines", [])]
        chk(("filters.lua", 12) not in lines, "growth --not-function render: lines %r" % lines)
        gt = ljm_ok("growth", "-q", "--size", "1K..", slow).decode()
        chk("; only blocks of 1 KiB or more" in gt.split("\n")[0], "growth: %r" % gt[:200])
if sampled:  # the samples filtered: a filter and its negation add up to the estimates
    whole = as_json(sampled)
    pos = as_json(sampled, "--function", "^render$")
    neg = as_json(sampled, "--not-function", "^render$")
    for f in FIGS:
        chk(pos["totals"][f] + neg["totals"][f] == whole["totals"][f] and pos["totals"][f] > 0,
            "sampled: %s %d + %d != %d" % (f, pos["totals"][f], neg["totals"][f], whole["totals"][f]))
    lk = as_json(sampled, "--lifetime", "leaked")["totals"]
    fr = as_json(sampled, "--lifetime", "freed")["totals"]
    for f in ("alloc_count", "alloc_bytes"):
        chk(lk[f] + fr[f] == whole["totals"][f] and lk["inuse_bytes"] == whole["totals"]["inuse_bytes"],
            "sampled: --lifetime leaked and freed %s %d + %d != %d"
            % (f, lk[f], fr[f], whole["totals"][f]))
    text = ljm_ok("report", "-q", "--function", "^render$", sampled).decode()
    chk(text.startswith("SAMPLED: ") and "\nFILTER: only blocks" in text,
        "sampled: report's head %r" % text[:200])

# Usage errors: one line, exit 2, naming the option.
if plain:
    for args, want in ((["--function", "("], "--function '(' is not a regular expression"),
                       (["--not-source", "a[b"], "--not-source 'a[b' is not a regular expression"),
                       (["--size", "10..5"], "--size 10..5: the range is empty"),
                       (["--size", "abc"], "--size wants MIN..MAX"),
                       (["--size", ".."], "--size wants MIN..MAX"),
                       (["--size", "1X"], "--size wants MIN..MAX"),
                       (["--size", "99999999999999999999"], "--size wants MIN..MAX")):
        for cmd in (["report"], ["convert", "-f", "json", "-o", "-"], ["growth"], ["top", "--once"]):
            r = run([ljm] + cmd + args + [plain])
            err = r.stderr.decode()
            chk(r.returncode == 2 and err.count("\n") == 1 and want in err and not r.stdout,
                "ljm %s %s: exit %d %r" % (cmd[0], " ".join(args), r.returncode, err))
    for args, want in ((["--lifetime", "x"], "--lifetime wants leaked, temporary or freed"),
                       (["--lived", "5s..1s"], "--lived 5s..1s: the range is empty"),
                       (["--lived", "1s"], "--lived wants MIN..MAX"),
                       (["--lived", "a..b"], "--lived wants MIN..MAX"),
                       (["--site-leaked", "101"], "--site-leaked wants a share from 0 to 100"),
                       (["--site-leaked", "x%"], "--site-leaked wants a share")):
        r = run([ljm, "report"] + args + [plain])
        err = r.stderr.decode()
        chk(r.returncode == 2 and err.count("\n") == 1 and want in err and not r.stdout,
            "ljm report %s: exit %d %r" % (" ".join(args), r.returncode, err))
    with open(plain, "rb") as f:
        r = run([ljm, "report", "--lifetime", "leaked", "-"], stdin=f)
    chk(r.returncode == 2 and b"give a file, not '-'" in r.stderr, "stdin: %r" % r.stderr)
    with open(plain, "rb") as f:
        r = run([ljm, "top", "--once", "--lifetime", "leaked", "-"], stdin=f)
    chk(r.returncode == 2 and b"--lifetime reads the recording anew" in r.stderr and
        b"not '-'" in r.stderr, "top on stdin: %r" % r.stderr)
    r = run([ljm, "top", "--once", "--lived", "1s..", plain])
    chk(r.returncode == 1 and b"--lived: the profile has no time marks" in r.stderr and
        not r.stdout, "top --lived without time: %d %r" % (r.returncode, r.stderr))
    r = run([ljm, "report", "--lived", "1s..", plain])
    chk(r.returncode == 1 and b"--lived: the profile has no time marks" in r.stderr and
        not r.stdout, "--lived without time: %d %r" % (r.returncode, r.stderr))
    # what a filter's text holds is made safe for every file: no new line, valid UTF-8
    odd = "render|x\n+ 1\n# \x01" + "\u00e9" * 600
    text = ljm_ok("report", "-q", "--function", odd, plain).decode("utf-8")
    chk(text.startswith("FILTER: only blocks with a frame whose function matches 'render|x?+ 1?# ?")
        and text.split("\n")[1] == "" and "..." in text.split("\n")[0],
        "an odd regex in the report: %r" % text[:120])
    ht = os.path.join(work, "odd.heaptrack.gz")
    ljm_ok("convert", "-q", "--function", odd, "-o", ht, plain)
    doc = as_json(plain, "--function", odd)
    r = run(["heaptrack_print", "-f", ht, "-p", "0", "-a", "0", "-T", "0", "-l", "0"])
    m = re.search(r"calls to allocation functions: (\d+)", r.stdout.decode())
    chk(m and int(m.group(1)) == doc["totals"]["alloc_count"] and b"out of bounds" not in r.stderr,
        "an odd regex in heaptrack's comment: %s allocations, JSON %d"
        % (m and m.group(1), doc["totals"]["alloc_count"]))
    svg = ljm_ok("convert", "-q", "--function", b"x\x01\xffy", "-f", "svg", "-o", "-", plain)
    try:
        ET.fromstring(svg)
        ok = True
    except ET.ParseError:
        ok = False
    chk(ok, "an odd regex makes the SVG not well-formed")
    for arg, note in (("1B..", "of 1 B or more"), ("1kib..2MIB", "of 1 KiB to 2 MiB"),
                      ("1K..1K", "of 1 KiB")):
        got = as_json(plain, "--size", arg)["stream"]["filter"]
        chk(got == "only blocks " + note, "--size %s: %r" % (arg, got))
    r = run([ljm, "convert", "-f", "ljm", "--size", "1K..", "-o", "x.ljm", plain])
    chk(r.returncode == 2 and b"--size: the ljm format is written from the stream" in r.stderr and
        not os.path.exists(os.path.join(work, "x.ljm")), "-f ljm --size: %r" % r.stderr)
    snap = os.path.join(work, "snap.ljh")
    rr = run([ljm, "record", "--snapshot-at-exit", snap, "-o", os.devnull, "filters.lua"])
    if chk(rr.returncode == 0 and os.path.exists(snap), "snapshot: %r" % rr.stderr[-200:]):
        r = run([ljm, "convert", "-f", "folded", "--function", "x", "-o", "-", snap])
        chk(r.returncode == 1 and b"filters apply to recordings" in r.stderr and not r.stdout,
            "a snapshot with --function: %d %r" % (r.returncode, r.stderr))
chk.done()
