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
    chk(r.returncode == 0, "ljm %s: exit %d %s" % (" ".join(args), r.returncode, r.stderr[-300:]))
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


def check_size(tag, path, lo, hi, arg):
    doc = as_json(path, "--size", arg)
    with open(path, "rb") as f:
        want = ljmread.totals(f.read(), size=(lo, hi))
    t = doc["totals"]
    got = dict((k, t[k]) for k in FIGS + ("peak_bytes", "peak_count", "temp_count"))
    got["dropped"] = doc["stream"]["filtered_out_events"]
    exp = dict((k, want[k]) for k in FIGS + ("peak_bytes", "peak_count"))
    exp["temp_count"] = want["temporary"]
    exp["dropped"] = want["dropped"]
    chk(want["status"] == "ok" and got == exp,
        "%s --size %s: %r, the independent reader %r" % (tag, arg, got, exp))
    return doc


def check_views(tag, path):
    filt = ("--function", "^render$")
    doc = as_json(path, *filt)
    note = doc["stream"]["filter"]
    dropped = doc["stream"]["filtered_out_events"]
    text = ljm_ok("report", "-q", *filt, path).decode()
    chk(text.startswith("FILTER: %s (%d other events left out)\n\n" % (note, dropped)),
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
    chk("Filter: %s (%d other events left out)." % (note, dropped) in md,
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
