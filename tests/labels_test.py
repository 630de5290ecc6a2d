#!/usr/bin/env python3
"""labels_test.py -- labels (rec.label) from recording to ljm report --by.

* testdata/labels/plugins.lua, recorded by `ljm record --time` (JIT off):
  its own checks of the module (label, labels, with_labels restoring after
  an error and around a yield, a coroutine inheriting its creator's labels,
  misuse raising errors, keys and values cut to 63 and 127 bytes) print
  "plugins: ok"; the stream defines each set once, selects only changes,
  and `ljm report --by plugin` gives plugin a its 1000 kept tables (plus
  the array that holds them, which stays a's when it grows under c), c
  its coroutine's 500 and the coroutine, b 1000 tables it dropped; the
  rest of the report is the downgraded stream's.
* With 5000 distinct request ids: 4095 sets, then (other), and the folded
  count in the stream and the report.
* Sampled (--sample 4k): the same values listed.
* A standard recording: rec.label returns false (nothing kept) and
  --by refuses in one line; every format reads a labelled stream.
* The JIT on, with stacks: the script's checks pass, a whole stream.
* testdata/labels/split.lua (known bytes under two labels), exact and
  sampled at 64k: each label's sampled estimate within three standard
  errors of the exact figure.
* --group-by plugin on the --time and the JIT-on --stacks streams: folded
  roots per value for four figures, JSON's label roots, label sets and
  per-node shares, the .heapprofile's roots, go tool pprof's plugin=VALUE
  frames and heaptrack_print -F's roots all equal the report's rows; SVG,
  Markdown and speedscope name every root; misuse refused; a 20 000-deep
  tree under 4095 values stays bounded.
* Hand-made label items the decoder refuses, each in one line at its byte.

* testdata/ext/labelled.ljm (make_labelled.py): the table its docstring
  works out by hand.

usage: labels_test.py LJM PLUGINS_LUA TESTDATA"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import ljmread
from checks import Checks
from viewer_text import folded_roots, tag_values
from ljmwrite import Stream, lstr, uleb

LJM = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
SCRIPT = os.path.join(TMP, "plugins.lua")
shutil.copy(sys.argv[2], SCRIPT)
check = Checks("labels")


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=TMP, **kw)


def record(name, opts, args=(), jit="-joff"):
    out = os.path.join(TMP, name)
    p = run([LJM, "record"] + ([jit] if jit else []) + ["-o", out] + opts + [SCRIPT] + list(args))
    check(p.returncode == 0 and "plugins: ok" in p.stdout,
          "record %s %s: the script's own checks pass (%r %r)" % (name, opts, p.stdout[-200:],
                                                                 p.stderr[-500:]))
    return out


def by_table(text, key):
    """ljm report --by's rows: value -> (in use, blocks, allocated, allocs, freed, frees)."""
    m = re.search(r"^BY LABEL %s .*\n.*\n((?:.*\S.*\n)*)" % re.escape(key), text, re.M)
    rows = {}
    # exact recordings have a seventh column, the temporary allocations
    ncol = 7 if m and "temporary" in m.group(0).split("\n")[1] else 6
    for line in (m.group(1) if m else "").splitlines():
        f = line.split()
        if len(f) > ncol and f[0][0].isdigit():
            rows[" ".join(f[ncol:])] = tuple(int(x.rstrip("B")) for x in f[:6])
    return rows


# -- Exact, with time marks ----------------------------------------------------
prof = record("plugins.ljm", ["--time"])
st = ljmread.parse(open(prof, "rb").read())
check(st.complete and not st.problems and st.flags == ljmread.TIME | ljmread.TYPES,
      "a whole --time stream (with allocation types), no problems (%s)"
      % st.problems[:3])
values = {dict(v).get(b"plugin") for v in st.label_sets.values() if v}
check({b"a", b"b", b"c", b"d", b"e"} <= values, "label sets of plugins a..e defined (%s)" % values)
check(st.label_selections >= 8, "label selections: %d" % st.label_selections)
p = run([LJM, "report", "--by", "plugin", prof])
check(p.returncode == 0 and p.stderr == "", "report --by plugin: exit 0 (%r)" % p.stderr)
rows = by_table(p.stdout, "plugin")
a, b, c = rows.get("a"), rows.get("b"), rows.get("c")
check(a and 1001 <= a[1] <= 1003 and a[3] >= 1001,
      "plugin a: its 1000 tables and their array in use (%s)" % (a,))
check(c and 501 <= c[1] <= 510 and c[3] >= 501,
      "plugin c: the coroutine's 500 tables and the coroutine (%s)" % (c,))
check(b and b[3] >= 1001 and b[1] <= b[3], "plugin b: 1000 tables and more allocated (%s)" % (b,))
check("(none)" in rows and all(r[0] >= 0 for r in rows.values()), "(none) listed: %s" % sorted(rows))
# The counts are the stream's: a's allocations, and the keep array's
# reallocations (at most a dozen doublings), which stay a's under c.
sets_a = {i for i, v in st.label_sets.items() if v and dict(v).get(b"plugin") == b"a"}
n_a = sum(1 for e in st.events if e.ev == 1 and e.labels in sets_a)
check(a and n_a <= a[3] <= n_a + 12, "plugin a's allocations are the stream's (%s, %d + the array's "
      "reallocations)" % (a and a[3], n_a))
rest = run([LJM, "report", prof]).stdout
check(p.stdout.endswith(rest) and p.stdout.startswith("BY LABEL plugin"),
      "the usual report follows the table")
# An exact recording's temporary allocations: a column adding up to the JSON's total.
doc = json.loads(run([LJM, "convert", "-q", "-f", "json", "-o", "-", prof]).stdout or "{}")
head = p.stdout.split("\n")[1].split()
temps = [int(ln.split()[6]) for ln in p.stdout.split("\n\n")[0].split("\n")[2:]
         if ln.split() and ln.split()[0][0].isdigit()]
check(head[-2:] == ["temporary", "plugin"] and doc.get("totals", {}).get("temp_count") == sum(temps),
      "report --by plugin: a temporary column adding up to the JSON's %r (%r, %r)"
      % (doc.get("totals", {}).get("temp_count"), head, temps))
p = run([LJM, "report", "--by", "route", prof])
rows = by_table(p.stdout, "route")
check(p.returncode == 0 and "/y" in rows and "(none)" in rows, "report --by route: %s" % sorted(rows))

# -- pprof: sample labels, read by go tool pprof --------------------------------------
def pprof(pb, *args):
    r = run(["go", "tool", "pprof", "-nodefraction=0", "-edgefraction=0", *args, pb])
    check(r.returncode == 0, "go tool pprof %s: exit 0 (%r)" % (" ".join(args), r.stderr[-300:]))
    return r.stdout


def shown_total(text):
    """go tool pprof -top: what the shown nodes account for (nothing dropped)."""
    m = re.search(r"^Showing nodes accounting for ([0-9.]+)B?, ", text, re.M)
    return float(m.group(1)) if m else None


def tagroot_cum(text, name):
    m = re.search(r"^\s*\S+\s+\S+\s+\S+\s+([0-9.]+)B?\s+\S+\s+%s$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


rows = by_table(run([LJM, "report", "--by", "plugin", prof]).stdout, "plugin")
pb = os.path.join(TMP, "plugins.pb.gz")
p = run([LJM, "convert", "-q", "-o", pb, prof])
check(p.returncode == 0, "convert to pprof (%r)" % p.stderr)
tags = tag_values(pprof(pb, "-tags", "-sample_index=inuse_objects"), "plugin")
check(tags.get("a") == rows["a"][1] and tags.get("c") == rows["c"][1] and "b" in tags,
      "-tags: plugins a and c hold their blocks in use (%s; report %s %s)"
      % (tags, rows["a"][1], rows["c"][1]))
for val, idx, col in (("alloc_objects", 3, "allocs"), ("alloc_space", 2, "allocated"),
                      ("inuse_space", 0, "in use")):
    for plug in ("a", "b", "c"):
        got = shown_total(pprof(pb, "-top", "-unit=B", "-sample_index=" + val, "-tagfocus=plugin=" + plug))
        want = rows[plug][idx]
        check(got == want or (want == 0 and got is None),
              "-tagfocus=plugin=%s -sample_index=%s: %s, report --by: %s %s" % (plug, val, got, col, want))
got = shown_total(pprof(pb, "-top", "-sample_index=inuse_objects", "-tagfocus=plugin", "-tagignore=plugin=a"))
check(got == rows["c"][1] + rows["d"][1], "-tagignore=plugin=a: c's and d's blocks (%s)" % got)
top = pprof(pb, "-top", "-sample_index=inuse_objects", "-tagroot=plugin")
check(tagroot_cum(top, "a") == rows["a"][1] and tagroot_cum(top, "<unknown>") == rows["(none)"][1],
      "-tagroot=plugin: a root per plugin, <unknown> for the unlabelled (a %s, none %s)"
      % (tagroot_cum(top, "a"), tagroot_cum(top, "<unknown>")))
# a's allocations as the stream has them (ljmread, not ljm): the count
# above was checked against the stream at the report.

# -- --label KEY=VALUE: only those blocks ------------------------------------------------
def heap_summary(text):
    """The HEAP SUMMARY's bytes in use, summed over its lines."""
    return sum(int(x) for x in re.findall(r"^\S.* holds (\d+)B:", text.split("HEAP SUMMARY:")[-1], re.M))


for term, row in (("plugin=a", "a"), ("plugin=b", "b"), ("plugin=(none)", "(none)")):
    p = run([LJM, "report", "--label", term, "--by", "plugin", prof])
    got = by_table(p.stdout, "plugin")
    check(p.returncode == 0 and got == {row: rows[row]},
          "report --label %s --by plugin: only its row, as unfiltered (%s; %s)" % (term, got, rows[row]))
    check(("FILTER: only blocks allocated under %s (" % term) in p.stdout,
          "--label %s: the report says which blocks it shows" % term)
    if row == "(none)":
        continue  # its HEAP SUMMARY counts as Tarantool's parser does, reallocations apart
    p = run([LJM, "report", "--label", term, prof])
    check(heap_summary(p.stdout) == rows[row][0],
          "report --label %s: the HEAP SUMMARY holds its %dB (%d)" % (term, rows[row][0], heap_summary(p.stdout)))
p = run([LJM, "report", "--label", "route=/y", "--label", "plugin=d", "--by", "plugin", prof])
got = by_table(p.stdout, "plugin")
check(p.returncode == 0 and list(got) == ["d"] and got["d"] == rows["d"],
      "two --label options: both must hold (%s)" % got)
p = run([LJM, "report", "--label", "route=/y", "--label", "plugin=a", "--by", "plugin", prof])
check(p.returncode == 0 and by_table(p.stdout, "plugin") == {}, "no block under route=/y and plugin=a")
pb = os.path.join(TMP, "a.pb.gz")
p = run([LJM, "convert", "-q", "--label", "plugin=a", "-o", pb, prof])
got = shown_total(pprof(pb, "-top", "-unit=B", "-sample_index=inuse_space"))
check(p.returncode == 0 and got == rows["a"][0], "convert --label plugin=a: pprof holds a's %dB (%s)"
      % (rows["a"][0], got))
for bad in ("plugin", "=a", ""):
    p = run([LJM, "report", "--label", bad, prof])
    check(p.returncode == 2 and p.stderr.count("\n") == 1, "--label %r: usage error (%r)" % (bad, p.stderr))
p = run([LJM, "growth", "--label", "plugin=a", prof])
q = run([LJM, "growth", prof])
check(p.returncode == q.returncode and p.returncode != 2 and p.stderr == q.stderr,
      "growth --label plugin=a: read as without it (%r)" % p.stderr[-200:])

# -- Many distinct sets: (other) ---------------------------------------------------
many = record("many.ljm", ["--time"], ["many"])
st = ljmread.parse(open(many, "rb").read())
check(st.complete and not st.problems and 4000 <= len(st.label_sets) <= 4096 and
      None in st.label_sets.values() and max(st.label_sets) <= 4096 and st.labels_folded >= 900,
      "5000 ids: at most 4095 sets and (other), folded %d (%d sets, problems %s)"
      % (st.labels_folded, len(st.label_sets), st.problems[:3]))
p = run([LJM, "report", "--by", "request", many])
rows = by_table(p.stdout, "request")
check(p.returncode == 0 and "(other)" in rows and len(rows) <= 4097 and
      re.search(r"^\(other\): \d+ label changes", p.stdout, re.M),
      "report --by request: (other) row and its count (%d rows)" % len(rows))
pb = os.path.join(TMP, "many.pb.gz")
p = run([LJM, "convert", "-q", "-o", pb, many])
tags = tag_values(pprof(pb, "-tags", "-sample_index=alloc_objects"), "request")
check(p.returncode == 0 and tags.get("(other)", 0) > 0 and tags["(other)"] == rows["(other)"][3],
      "pprof: the folded sets as request=(other), as the report counts them (%s; report %s)"
      % (tags.get("(other)"), rows.get("(other)")))
check(sum(tags.values()) == sum(r[3] for k, r in rows.items() if k != "(none)"),
      "pprof: request's tags add up to the report's labelled allocations")
p = run([LJM, "convert", "-q", "--group-by", "request", "-f", "folded", "--value", "alloc_count",
         "-o", "-", many])
want = {"request=" + k: r[3] for k, r in rows.items() if r[3]}
check(p.returncode == 0 and folded_roots(p.stdout) == want,
      "--group-by request: a root per request id and (other), as the report counts them "
      "(%d roots, want %d; %r)" % (len(folded_roots(p.stdout)) if p.returncode == 0 else -1,
                                    len(want), p.stderr[-200:]))

# -- Sampled ---------------------------------------------------------------------
sampled = record("sampled.ljm", ["--sample", "4k", "--sample-seed", "3"])
p = run([LJM, "report", "--by", "plugin", sampled])
rows = by_table(p.stdout, "plugin")
check(p.returncode == 0 and "a" in rows and "b" in rows and p.stdout.startswith("SAMPLED"),
      "sampled: a and b listed (%s)" % sorted(rows))
pb = os.path.join(TMP, "sampled.pb.gz")
run([LJM, "convert", "-q", "-o", pb, sampled])
tags = tag_values(pprof(pb, "-tags", "-unit=B", "-sample_index=alloc_space"), "plugin")
# A filtered view samples the same blocks: a's estimates as unfiltered.
p = run([LJM, "report", "--label", "plugin=a", "--by", "plugin", sampled])
check(by_table(p.stdout, "plugin") == {"a": rows["a"]}, "sampled --label plugin=a: a's estimates (%s; %s)"
      % (by_table(p.stdout, "plugin"), rows["a"]))
# The report rounds estimates to 3 digits.
check(all(k in tags and abs(tags[k] - rows[k][2]) <= rows[k][2] * 0.005 for k in ("a", "b")),
      "sampled pprof: -tags gives the report's estimates for a and b (%s)" % tags)

# -- The JIT on: the same checks pass, the stream is whole -------------------------------
jit = record("jit.ljm", ["--stacks"], jit=None)
st = ljmread.parse(open(jit, "rb").read())
values = {dict(v).get(b"plugin") for v in st.label_sets.values() if v}
check(st.complete and not st.problems and {b"a", b"b", b"c"} <= values,
      "JIT on, with stacks: a whole stream with plugins a, b, c (%s)" % st.problems[:3])
rows = by_table(run([LJM, "report", "--by", "plugin", jit]).stdout, "plugin")
check(rows.get("a") and 1001 <= rows["a"][1] <= 1010,
      "JIT on: a's 1000 tables in use, and what the JIT made for them (%s)" % (rows.get("a"),))

# -- --group-by plugin: a root frame per value, in every tree format ---------------------
def heapprofile_roots(path):
    """A .heapprofile (DevTools): root child name -> the selfSize of its subtree."""
    import json
    def size(n):
        total, todo = 0, [n]
        while todo:
            x = todo.pop()
            total += x["selfSize"]
            todo.extend(x["children"])
        return total
    head = json.load(open(path))["head"]
    return {c["callFrame"]["functionName"]: size(c) for c in head["children"]}


def check_grouped(prof, what):
    rows = by_table(run([LJM, "report", "--by", "plugin", prof]).stdout, "plugin")
    for value, idx in (("alloc_bytes", 2), ("alloc_count", 3), ("inuse_bytes", 0),
                       ("inuse_count", 1)):
        p = run([LJM, "convert", "-q", "-f", "folded", "--group-by", "plugin", "--value", value,
                 "-o", "-", prof])
        want = {"plugin=" + k: r[idx] for k, r in rows.items() if r[idx]}
        check(p.returncode == 0 and folded_roots(p.stdout) == want,
              "%s: folded --group-by plugin --value %s: a root per value with the report's "
              "figure (%s; report %s)" % (what, value, folded_roots(p.stdout), want))
    out = os.path.join(TMP, "g.json")
    p = run([LJM, "convert", "-q", "--group-by", "plugin", "-o", out, prof])
    import json
    d = json.load(open(out)) if p.returncode == 0 else {"nodes": [], "sites": [], "label_sets": []}
    roots = {d["sites"][n["site"]]["func"]: n["total"] for n in d["nodes"]
             if n["parent"] is None and n["site"] is not None and
             d["sites"][n["site"]]["kind"] == "label"}
    check(d.get("group_by") == "plugin" and
          {k: (r["inuse_bytes"], r["alloc_count"], r["free_bytes"]) for k, r in roots.items()} ==
          {"plugin=" + k: (r[0], r[3], r[4]) for k, r in rows.items()},
          "%s: JSON: a label root per value with the report's in use, allocs, freed (%s)"
          % (what, sorted(roots)))
    # every labelled allocation by its set's id: the nodes' shares add up to each set's figures
    per_set = {}
    for n in d["nodes"]:
        for x in n["labels"]:
            per_set[x["set"]] = per_set.get(x["set"], 0) + x["alloc_bytes"]
    sets = {x["id"]: x for x in d["label_sets"]}
    check(per_set and all(sets[i]["alloc_bytes"] == v for i, v in per_set.items()) and
          {i for i, x in sets.items() if i and x["alloc_bytes"]} == set(per_set),
          "%s: JSON: nodes' label shares add up to each label set's bytes (%d sets)"
          % (what, len(per_set)))
    a = sum(x["alloc_bytes"] for x in d["label_sets"] if x["labels"].get("plugin") == "a")
    check(a == rows["a"][2], "%s: JSON: plugin a's sets allocated %d, report %d" % (what, a, rows["a"][2]))
    hp = os.path.join(TMP, "g.heapprofile")
    p = run([LJM, "convert", "-q", "--group-by", "plugin", "-o", hp, prof])
    got = heapprofile_roots(hp) if p.returncode == 0 else {}
    want = {"plugin=" + k: r[0] for k, r in rows.items() if r[0]}
    check({k: v for k, v in got.items() if v} == want,
          "%s: .heapprofile: a root per value holding its bytes in use (%s; %s)" % (what, got, want))
    pb = os.path.join(TMP, "g.pb.gz")
    p = run([LJM, "convert", "-q", "--group-by", "plugin", "-o", pb, prof])
    top = pprof(pb, "-top", "-cum", "-unit=B", "-sample_index=inuse_space")
    check(all(tagroot_cum(top, "plugin=" + k) == r[0] for k, r in rows.items() if r[0]),
          "%s: go tool pprof: plugin=VALUE frames hold the report's bytes in use" % what)
    ht = os.path.join(TMP, "g.heaptrack.gz")
    p = run([LJM, "convert", "-q", "--group-by", "plugin", "-o", ht, prof])
    stacks = ht + ".stacks"
    p = run(["heaptrack_print", "-f", ht, "-F", stacks, "--flamegraph-cost-type", "allocations"])
    got = folded_roots(open(stacks).read()) if p.returncode == 0 and os.path.exists(stacks) else {}
    want = {"plugin=" + k: r[3] for k, r in rows.items() if r[3]}
    check(got == want, "%s: heaptrack_print -F: a root per value with its allocations (%s; %s)"
          % (what, got, want))
    for fmt in ("svg", "markdown", "speedscope"):
        out = os.path.join(TMP, "g." + fmt)
        p = run([LJM, "convert", "-q", "-f", fmt, "--group-by", "plugin", "-o", out, prof])
        body = open(out, encoding="utf-8").read() if p.returncode == 0 else ""
        # the flame graph leaves out frames under 0.1 px wide: look for those of 1% and more
        big = sum(r[2] for r in rows.values()) / (100 if fmt == "svg" else 1e18)
        shown = [k for k in rows if rows[k][2] > big]
        check(len(shown) >= 3 and all("plugin=" + k in body for k in shown),
              "%s: %s --group-by plugin names every value's root: %s (%r)"
              % (what, fmt, shown, p.stderr[-200:]))


check_grouped(prof, "--time")
check_grouped(jit, "--stacks, JIT on")
for fmt, code in (("text", 2), ("ljm", 2)):
    p = run([LJM, "convert", "-f", fmt, "--group-by", "plugin", "-o", os.path.join(TMP, "x"), prof])
    check(p.returncode == code and p.stderr.count("\n") == 1 and "--group-by" in p.stderr,
          "convert -f %s --group-by: refused in one line (%r)" % (fmt, p.stderr))
for bad in ("", "a=b", "k" * 64):
    p = run([LJM, "convert", "--group-by", bad, "-o", os.path.join(TMP, "x.folded"), prof])
    check(p.returncode == 2, "--group-by %r: usage error (%r)" % (bad, p.stderr))
# A deep tree shared by 4095 values (a chain of 20 000 frames, one block per
# set at its end): the copies stay bounded (twice the stream's nodes and
# 2^16); past that a value's blocks hang below its root's "[...]".
deep = Stream(flags=3)
deep.proto(0x1000, b"@app.lua", 0)
tip = 0
for i in range(20000):
    tip = deep.node(tip, ("lua", 0x1000, 5 + i % 7))
for k in range(1, 4096):
    deep.annotation(0x26, uleb(k) + lstr(b"k") + lstr(b"v%d" % k))
    deep.annotation(0x27, uleb(k))
    deep.stack(tip)
    deep.alloc("lua", (0x1000, 5), 0x10000 + 16 * k, 16)
path = os.path.join(TMP, "deep.ljm")
open(path, "wb").write(deep.data())
p = run([LJM, "convert", "-q", "--group-by", "k", "-f", "json", "-o", "-", path])
d = json.loads(p.stdout) if p.returncode == 0 else {"nodes": [], "sites": []}
roots = [n["total"]["alloc_bytes"] for n in d["nodes"] if n["parent"] is None and
         d["sites"][n["site"]]["kind"] == "label"]
check(len(d["nodes"]) <= 20000 + 2 * (20000 + 2) + 65536 + 20000 + 3 * 4095 and
      len(roots) == 4095 and set(roots) == {16},
      "a deep tree under 4095 values: %d nodes, a root per value with its 16 bytes (%r)"
      % (len(d["nodes"]), p.stderr[-200:]))
# A new value's root is a new site: made while an event's site is being
# counted (64 sites, then a value at an existing line), its figures stay right.
few = Stream(flags=2)
few.proto(0x1000, b"@a.lua", 0)
few.annotation(0x26, uleb(1) + lstr(b"k") + lstr(b"a"))
few.annotation(0x27, uleb(1))
for line in range(1, 64):
    few.alloc("lua", (0x1000, line), 0x100 + 16 * line, 10)
few.annotation(0x27, uleb(0))
few.alloc("lua", (0x1000, 1), 0x10000, 1000)
path64 = os.path.join(TMP, "sites64.ljm")
open(path64, "wb").write(few.data())
p = run([LJM, "convert", "-q", "--group-by", "k", "-f", "folded", "-o", "-", path64])
q = run([LJM, "convert", "-q", "--group-by", "k", "-f", "json", "-o", "-", path64])
d = json.loads(q.stdout) if q.returncode == 0 else {"totals": {}, "sites": []}
check(p.returncode == 0 and folded_roots(p.stdout) == {"k=a": 630, "k=(none)": 1000} and
      d["totals"].get("alloc_bytes") == 1630 and sum(x["alloc_bytes"] for x in d["sites"]) == 1630,
      "a root made when the sites' array is full: k=a 630 B, k=(none) 1000 B, 1630 B in the "
      "sites and totals (%s, %s, %r)" % (folded_roots(p.stdout), d["totals"].get("alloc_bytes"),
                                         p.stderr[-200:]))
# Label roots are functions of their own in pprof, whatever their names' order.
fk = Stream(flags=3)
fk.proto(0x1000, b"@a.lua", 0)
fk.proto(0x2000, b"@b.lua", 5)
n1 = fk.node(0, ("lua", 0x1000, 3))
n2 = fk.node(n1, ("lua", 0x2000, 7))
for i, v in enumerate([b"x", b"y", b"z"]):
    fk.annotation(0x26, uleb(i + 1) + lstr(b"k") + lstr(v))
for set_id, node, loc, addr, size in ((1, n2, (0x2000, 7), 0x100, 100), (2, n2, (0x2000, 7), 0x200, 200),
                                      (3, n1, (0x1000, 3), 0x300, 300), (0, n2, (0x2000, 7), 0x400, 400)):
    fk.annotation(0x27, uleb(set_id))
    fk.stack(node)
    fk.alloc("lua", loc, addr, size)
pathfk = os.path.join(TMP, "fk.ljm")
open(pathfk, "wb").write(fk.data())
pb = os.path.join(TMP, "fk.pb.gz")
p = run([LJM, "convert", "-q", "--group-by", "k", "-o", pb, pathfk])
top = pprof(pb, "-top", "-cum", "-unit=B", "-sample_index=alloc_space")
got = {v: tagroot_cum(top, "k=" + v) for v in ("x", "y", "z", "(none)")}
check(got == {"x": 100, "y": 200, "z": 300, "(none)": 400},
      "go tool pprof: each label root its own frame with its bytes (%s)" % got)
p = run([LJM, "convert", "-q", "--group-by", "k", "-f", "folded", "-o", "-", path])
lines = p.stdout.splitlines()
check(len(lines) == 4095 and all(re.match(r"k=v\d+;", x) for x in lines) and
      sum(x.endswith(";[...];app.lua:5 16") for x in lines) > 3000,
      "past the bound a value's block is below its root's [...] (%s)" % lines[-1:])

# -- Sampled estimates per label against the exact figures ------------------------------
# split.lua allocates known bytes under two labels; one recording exact, one
# sampled at 64k: each label's allocated bytes within three standard errors
# of the exact figure (a sample's count is Poisson: 1/sqrt(samples)).
split = os.path.join(TMP, "split.lua")
shutil.copy(os.path.join(os.path.dirname(sys.argv[2]), "split.lua"), split)
exact_rows = sampled_rows = {}
for name, opts in (("split_exact.ljm", ["--time"]), ("split_sampled.ljm", ["--sample", "64k"])):
    out = os.path.join(TMP, name)
    p = run([LJM, "record", "-o", out] + opts + [split])
    check(p.returncode == 0 and "split: ok" in p.stdout, "%s recorded (%r)" % (name, p.stderr[-300:]))
    got = by_table(run([LJM, "report", "--by", "kind", out]).stdout, "kind")
    if name == "split_exact.ljm":
        exact_rows = got
    else:
        sampled_rows = got
for kind in ("tables", "strings"):
    ex, sa = exact_rows.get(kind), sampled_rows.get(kind)
    if not check(ex and sa, "split: %s in both reports (%s, %s)" % (kind, ex, sa)):
        continue
    samples = ex[2] / (64 * 1024)
    err = sa[2] / ex[2] - 1
    check(abs(err) <= 3 / samples ** 0.5, "sampled 64k: %s allocated %d B, exact %d B (%+.1f%%, "
          "bound %.1f%%)" % (kind, sa[2], ex[2], 100 * err, 300 / samples ** 0.5))
    check(sa[0] <= sa[2] * 0.05, "sampled: %s dropped before the end (in use %d)" % (kind, sa[0]))

# -- Standard: nothing kept ------------------------------------------------------------
std = os.path.join(TMP, "std.ljm")
NOLABELS = """local rec = misc.memprof
print(rec.label("plugin", "a"))
local t = {}
for i = 1, 17 do t["k" .. i] = "v" end
print(pcall(rec.with_labels, t, print))
local function g() local r = rec.with_labels(5, print) return r end  -- line 6
print(select(2, pcall(g)))
print(rec.with_labels({a = "1"}, function() return "ran" end))
"""
p = run([LJM, "record", "-joff", "-o", std, "-"], input=NOLABELS)
out = p.stdout.splitlines()
check(p.returncode == 0 and len(out) == 4 and out[0].startswith("false"),
      "standard recording: label() false (%r)" % p.stdout)
check(len(out) == 4 and out[1].startswith("false") and "at most 16 labels" in out[1],
      "a 17th label is an error with no recording keeping labels too (%r)" % out[1:2])
check(len(out) == 4 and re.search(r":6: bad argument #1 to 'with_labels' \(table expected", out[2]),
      "with_labels misuse: the error names the caller's line (%r)" % out[2:3])
check(len(out) == 4 and out[3] == "ran", "with_labels calls fn when nothing keeps labels")
p = run([LJM, "report", "--by", "plugin", std])
check(p.returncode == 1 and p.stderr.count("\n") == 1 and "no labels" in p.stderr,
      "--by on a stream without labels: one line, exit 1 (%r)" % p.stderr)
p = run([LJM, "report", "--label", "plugin=a", std])
check(p.returncode == 1 and p.stderr.count("\n") == 1 and "no labels" in p.stderr and p.stdout == "",
      "--label on a stream without labels: one line, exit 1, nothing printed (%r)" % p.stderr)
out = os.path.join(TMP, "std.folded")
p = run([LJM, "convert", "--group-by", "plugin", "-o", out, std])
check(p.returncode == 1 and p.stderr.count("\n") == 1 and "no labels" in p.stderr and
      not os.path.exists(out), "--group-by on a stream without labels: one line, exit 1, no file (%r)"
      % p.stderr)
p = run([LJM, "report", "--by", "", std])
check(p.returncode == 2, "--by '': usage error")
ljh = os.path.join(TMP, "exit.ljh")
p = run([LJM, "record", "-joff", "--snapshot-at-exit", ljh, "-o", os.path.join(TMP, "s.ljm"), "-"],
        input="T = {1, 2, 3}")
p = run([LJM, "convert", "--label", "plugin=a", "-o", os.path.join(TMP, "h.pb.gz"), ljh])
check(os.path.exists(ljh) and p.returncode == 1 and p.stderr.count("\n") == 1 and
      "no labels" in p.stderr, "convert --label of a heap snapshot: one line, exit 1 (%r)" % p.stderr)
p = run([LJM, "convert", "--group-by", "plugin", "-o", os.path.join(TMP, "h.folded"), ljh])
check(p.returncode == 1 and p.stderr.count("\n") == 1 and "no labels" in p.stderr,
      "convert --group-by of a heap snapshot: one line, exit 1 (%r)" % p.stderr)
p = run([LJM, "convert", "-f", "ljm", "--label", "plugin=a", "-o", os.path.join(TMP, "f.ljm"), prof])
check(p.returncode == 2 and "--label" in p.stderr and not os.path.exists(os.path.join(TMP, "f.ljm")),
      "convert -f ljm --label: refused, the stream is copied as it is (%r)" % p.stderr)
for fmt in ("folded", "svg", "markdown", "json", "pprof", "heaptrack", "speedscope", "heapprofile",
            "ljm"):
    out = os.path.join(TMP, "o." + fmt)
    p = run([LJM, "convert", "-q", "-f", fmt, "-o", out, prof])
    check(p.returncode == 0 and os.path.getsize(out) > 0, "a labelled stream as %s (%r)"
          % (fmt, p.stderr[-200:]))

# -- Label items the decoder refuses -------------------------------------------------
SYMS = b"\x00" + uleb(0x100) + lstr(b"@x.lua") + uleb(1)


def item(h, body):
    return bytes([h]) + uleb(len(body)) + body


def lset(i, *pairs):
    return item(0x26, uleb(i) + b"".join(lstr(k) + lstr(v) for k, v in pairs))


ALLOC = b"\x09" + uleb(0x100) + uleb(2) + uleb(0x5000) + uleb(32)
# (what, items before, the item refused, what the message says)
BAD = [
    ("selects an undefined set", b"", item(0x27, uleb(3)), "label set 3 is not defined"),
    ("defines a set twice", lset(1, (b"k", b"v")), lset(1, (b"k", b"w")), "defined twice"),
    ("set 0", b"", lset(0, (b"k", b"v")), "label set 0"),
    ("set 4097", b"", lset(4097, (b"k", b"v")), "label set 4097"),
    ("17 labels", b"", lset(1, *[(b"k%d" % i, b"v") for i in range(17)]), "more than 16"),
    ("a 64-byte key", b"", lset(1, (b"k" * 64, b"v")), "key"),
    ("a 128-byte value", b"", lset(1, (b"k", b"v" * 128)), "value"),
    ("a key twice", b"", lset(1, (b"k", b"v"), (b"k", b"w")), "key is label 1's"),
    ("a cut pair", b"", item(0x26, uleb(1) + uleb(5) + b"ab"), "cut"),
    ("an item of 5000 bytes", b"", item(0x26, uleb(1) + b"\x00" * 4999), "5000 bytes"),
]
HEAD = b"ljs\x03\x00\x00\x00" + SYMS + b"\x80" + b"ljm\x03\x02\x00\x00\x22\x00"
for what, before, bad, want in BAD:
    path = os.path.join(TMP, "bad.ljm")
    data = HEAD + before + bad + ALLOC + b"\x80"
    open(path, "wb").write(data)
    p = run([LJM, "report", path])
    check(p.returncode == 1 and p.stderr.count("\n") == 1 and want in p.stderr and
          "byte %d:" % len(HEAD + before) in p.stderr,
          "a stream that %s: one line at byte %d, exit 1 (%r)" % (what, len(HEAD + before), p.stderr))
ok = (HEAD + lset(1, (b"plugin", b"x")) + item(0x27, uleb(1)) + ALLOC + item(0x28, uleb(7)) + b"\x80")
open(os.path.join(TMP, "ok.ljm"), "wb").write(ok)
p = run([LJM, "report", "--by", "plugin", os.path.join(TMP, "ok.ljm")])
rows = by_table(p.stdout, "plugin")
check(p.returncode == 0 and rows.get("x") == (32, 1, 32, 1, 0, 0) and "(other): 7 label" in p.stdout,
      "a hand-made labelled stream: x holds its 32 bytes, 7 folded (%r)" % p.stdout[:400])

p = run([LJM, "report", "--by", "plugin", os.path.join(os.path.abspath(sys.argv[3]), "ext",
                                                  "labelled.ljm")])
want = {"auth": (128, 1, 292, 3, 100, 1), "(other)": (57, 2, 57, 2, 0, 0),
        "json": (40, 1, 40, 1, 0, 0), "(none)": (10, 1, 10, 1, 0, 0)}
got = by_table(p.stdout, "plugin")
check(p.returncode == 0 and got == want and list(got) == list(want),
      "labelled.ljm: the table worked out by hand, in order (%s)" % got)

sys.exit(check.done(minimum=30))
