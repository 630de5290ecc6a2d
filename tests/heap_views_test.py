#!/usr/bin/env python3
"""heap_views_test.py -- what `ljm heap` and `ljm convert` make of a real
program's heap (testdata/heap/app.lua under the system's LuaJIT): a module
cache, sessions in a global, 200 objects named by their metatable, a
suspended coroutine holding a local, a large main-chunk local.

  * names: the module path (package.loaded.sessmod.cache), locals and
    upvalues by name, several paths per object, globals and modules first;
  * the process's figures (RSS, malloc) beside the VM's, as the independent
    reader (tests/lib/ljhread.py) reads them from the file, and a
    version 1 snapshot (none recorded) still read;
  * growth grouped by container: the cache's new entries under the cache;
  * --path-to by type name (Point), before labels;
  * function names in the .heapsnapshot (DevTools);
  * the heap as a flame graph: folded, SVG, pprof, speedscope and
    .heapprofile adding up to the snapshot's bytes, arrays folded; Heaptrack's
    own reader (heaptrack_print) finding an allocation per object.
usage: heap_views_test.py LJM APP_DIR"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import ljhread
from checks import Checks

ljm, app_dir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
chk = Checks("heap_views")
work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
for f in ("app.lua", "sessmod.lua"):
    shutil.copy(os.path.join(app_dir, f), work)
OLD_N, NEW_N = 300, 1300


def record(n, name):
    snap = os.path.join(work, name)
    r = subprocess.run([ljm, "record", "-o", os.path.join(work, name + ".ljm"), "app.lua", str(n), snap],
                       capture_output=True, text=True, timeout=300, cwd=work)
    chk(r.returncode == 0 and os.path.exists(snap), "ljm record app.lua %d: %d %s" % (n, r.returncode, r.stderr))
    return snap


def heap(*args):
    r = subprocess.run([ljm, "heap"] + list(args), capture_output=True, text=True, timeout=300)
    chk(r.returncode == 0, "ljm heap %s: exit %d %s" % (" ".join(args), r.returncode, r.stderr))
    return r.stdout


def heap_json(*args):
    try:
        return json.loads(heap("--json", *args))
    except ValueError as e:
        chk(False, "ljm heap --json %s: %s" % (" ".join(args), e))
        return {}


def line_of(text):
    with open(os.path.join(work, "app.lua")) as f:
        return next(i for i, ln in enumerate(f, 1) if text in ln)


old, new = record(OLD_N, "old.ljh"), record(NEW_N, "new.ljh")
with open(new, "rb") as f:
    build, gctotal, figures, objs = ljhread.read_all(f.read())

# -- Names and paths ---------------------------------------------------------------
j = heap_json(new)
rows = {r["path"]: r for r in j.get("retainers", [])}
chk("package.loaded.sessmod.cache" in rows, "the module's cache by its module path: %s"
    % sorted(rows)[:12])
mod = rows.get("package.loaded.sessmod", {})
chk(mod.get("paths", [None])[0] == "package.loaded.sessmod" and
    "main thread<main chunk (app.lua) local sessmod>" in mod.get("paths", []) and
    "package.loaded.sessmod.put<upvalue M>" in mod.get("paths", []) and mod.get("references") == 3,
    "the module table: its module path first, then the upvalue and the local by name, 3 "
    "references: %s" % mod)
chk("main thread<main chunk (app.lua) local big>" in rows, "a main-chunk local by name")
held = "_G.worker<app.lua:%d local held>" % line_of("worker = coroutine.create")
chk(held in rows and rows[held]["type"] == "table", "the coroutine's local by name: %s"
    % [p for p in rows if "worker" in p])
one = heap_json("--paths", "1", new)
chk(all(len(r["paths"]) <= 1 for r in one.get("retainers", [])) and
    {r["path"]: r["references"] for r in one.get("retainers", [])} ==
    {r["path"]: r["references"] for r in j.get("retainers", [])},
    "--paths 1: one path each, the references still counted")
text = heap(new)
chk("package.loaded.sessmod.cache" in text and "(+" in text and "more references into it)" in text,
    "text: paths and how many more references there are")

# -- The process's figures ---------------------------------------------------------
p = j.get("process") or {}
# glibc's malloc figures are absent where another allocator replaced it
# (ASan's, in the sanitizer build), never zeros.
malloc_known = "malloc_held" in figures
chk(figures.get("rss", 0) > gctotal and (not malloc_known or
                                          figures["malloc_held"] >= figures["malloc_in_use"] > 0),
    "the file records RSS above the Lua heap and malloc's figures: %s (VM %d)" % (figures, gctotal))
# The recorder's own buffers (ljm record's) are left out of the program's
# figures: RSS, malloc in use and held less what the file says it held.
own = min(figures.get("recorder", 0), figures.get("malloc_in_use", 0))
# (RSS less the part of it in RAM: buffer pages never written are not.)
prog = {k: (figures[k] - (figures.get("recorder_rss", 0) if k == "rss" else own)
            if k in figures else None)
        for k in ("rss", "malloc_in_use", "malloc_held")}
chk(not own or 0 < figures.get("recorder_rss", 0) <= own + (1 << 20),
    "the part of the recorder's memory in RAM: %s" % figures)
chk(not malloc_known or own >= 8 << 20, "the file records the recorder's own buffers (ljm record's 2 x 8 MB): %s"
    % figures)
chk(p == dict(prog, recorder=own),
    "--json process figures, the program's and the recorder's: %s, %s" % (p, figures))
mtext = ("glibc malloc %d in use, %d held" % (prog["malloc_in_use"], prog["malloc_held"])
         if malloc_known else "glibc malloc unknown")
chk(re.search(r"^process: RSS %d bytes; %s" % (prog["rss"] or -1, re.escape(mtext)), text, re.M) and
    (not own or re.search(r"^recorder: %d bytes of its own buffers" % own, text, re.M)) and
    re.search(r"^gap: RSS - Lua heap = %d bytes" % ((prog["rss"] or 0) - gctotal), text, re.M),
    "text: the three figures side by side, the recorder's apart, and the gap: %s" % text[:600])
# A version 1 snapshot (before the figures): the same objects, no figures.
with open(new, "rb") as f:
    data = f.read()
v1 = os.path.join(work, "v1.ljh")
with open(v1, "wb") as f:
    f.write(ljhread.as_version1(data))
j1 = heap_json(v1)
chk(j1.get("process", 0) is None and j1.get("bytes") == j.get("bytes") and
    j1.get("retainers") == j.get("retainers"),
    "a version 1 snapshot reads the same, without process figures")
chk("(no process figures" in heap(v1), "text of a version 1 snapshot says it has no figures")

# -- Growth, grouped by container -------------------------------------------------
def cache_entries(path):
    with open(path, "rb") as f:
        _, _, _, o = ljhread.read_all(f.read())
    g = [o[t] for k, w, t, what in o[0].edges if k == ljhread.NAME and what == "registry"][0]
    loaded = [o[t] for k, w, t, what in g.edges if k == ljhread.STRKEY and o[what].label == "_LOADED"][0]
    mod = [o[t] for k, w, t, what in loaded.edges if k == ljhread.STRKEY and o[what].label == "sessmod"][0]
    cache = [o[t] for k, w, t, what in mod.edges if k == ljhread.STRKEY and o[what].label == "cache"][0]
    return sum(1 for k, w, t, what in cache.edges if k == ljhread.STRKEY)


gj = heap_json("--base", old, new)
grows = gj.get("retainers", [])
cache = [r for r in grows if r["path"] == "package.loaded.sessmod.cache"]
want = cache_entries(new) - cache_entries(old)
chk(want == NEW_N - OLD_N, "the reader: the cache has %d new entries" % want)
chk(cache and cache[0]["entries"] == want and cache[0]["grown"]["count"] > 0 and
    all(e["path"].startswith("package.loaded.sessmod.cache.key") for e in cache[0]["grown"]["examples"]) and
    len(cache[0]["grown"]["examples"]) == 2,
    "--base: the cache's row counts its new entries, with two examples: %s" % cache[:1])
chk(not [r for r in grows if r["path"].startswith("package.loaded.sessmod.cache.")],
    "--base: no row of its own for an entry: %s"
    % [r["path"] for r in grows if r["path"].startswith("package.loaded.sessmod.cache.")][:3])
chk(grows and grows[0]["retained_bytes"] >= cache[0]["retained_bytes"] if cache else False,
    "--base: the largest growth first")
gtext = heap("--base", old, new)
chk(re.search(r"^\s+\+%d entries, e\.g\. \.key\d+ \(\+\d+\), \.key\d+ \(\+\d+\)$" % want, gtext, re.M),
    "--base text: the entries on the cache's row: %s" % gtext[:1200])
chk(gtext.count("\n") < 40, "--base text: the first screen answers (%d lines)" % gtext.count("\n"))

# -- --path-to by type name -------------------------------------------------------
m = heap_json("--path-to", "^Point$", "--top", "1000", new)
matches = m.get("matches", [])
points = [x for x in matches if x["type"] == "Point"]
chk(len(points) == 200 and matches[:200] == points and
    all(re.match(r"^_G\.points\[\d+\]$", x["paths"][0]) for x in points),
    "--path-to Point: the 200 tables of that __name first, each under _G.points: %d of %d"
    % (len(points), len(matches)))
chk(any(x["type"] == "string" and x["label"] == "Point" for x in matches[200:]),
    "--path-to Point: the string \"Point\" after them")
t = heap_json("--top", "^Point$", "--top", "7", new).get("retainers", [])
chk(len(t) == 7 and all(x["type"] == "Point" for x in t) and
    [x["retained_bytes"] for x in t] == sorted((x["retained_bytes"] for x in t), reverse=True),
    "--top Point --top 7: the seven largest Points: %s" % [(x["path"], x["type"]) for x in t])
r = subprocess.run([ljm, "heap", "--top", "(", new], capture_output=True, text=True)
chk(r.returncode == 2 and r.stderr.count("\n") == 1, "--top with a bad pattern: a usage error: %r" % r.stderr)

# -- DevTools: functions by name --------------------------------------------------
hs = os.path.join(work, "new.heapsnapshot")
r = subprocess.run([ljm, "convert", "-o", hs, new], capture_output=True, text=True)
chk(r.returncode == 0, "convert to .heapsnapshot: %s" % r.stderr)
with open(hs) as f:
    doc = json.load(f)
meta = doc["snapshot"]["meta"]
nf_ = len(meta["node_fields"])
closure = meta["node_types"][0].index("closure")
names = [doc["strings"][doc["nodes"][i + 1]] for i in range(0, len(doc["nodes"]), nf_)
         if doc["nodes"][i] == closure]
for want_name in ("new_point", "sessmod.put", "string.rep", "coroutine.create", "table.move"):
    chk(want_name in names, "DevTools function name %s: %s" % (want_name, sorted(names)[:20]))
unnamed = [n for n in names if n.startswith("C function 0x") or re.search(r":-1$", n) or re.match(r"^0x", n)]
chk(len(unnamed) * 20 <= len(names), "functions by address: %d of %d (%s)" % (len(unnamed), len(names), unnamed[:5]))

# -- The heap as a flame graph ----------------------------------------------------
total = j.get("bytes")


def convert(suffix):
    out = os.path.join(work, "flame" + suffix)
    r = subprocess.run([ljm, "convert", "-o", out, new], capture_output=True, text=True)
    chk(r.returncode == 0, "convert the snapshot to %s: %s" % (suffix, r.stderr))
    return out


folded = open(convert(".folded")).read().splitlines()
fsum = sum(int(ln.rsplit(" ", 1)[1]) for ln in folded)
stacks = {ln.rsplit(" ", 1)[0] for ln in folded}
chk(fsum == total, "folded: %d bytes, the snapshot %d" % (fsum, total))
chk("_G;sessions;[1..50];buf" in stacks and "_G;points;[1..200]" in stacks,
    "folded: arrays as one frame, their elements' fields merged: %s"
    % sorted(s for s in stacks if s.startswith("_G;"))[:8])
chk(any(s.startswith("package.loaded.sessmod;cache;key") for s in stacks),
    "folded: the cache's entries under the module")
svg = open(convert(".svg")).read()
root = re.search(r'<g [^>]*ljm:depth="0"[^>]*>', svg)
rv = re.search(r'ljm:v="(\d+)"', root.group(0)) if root else None
chk(rv and int(rv.group(1)) == total, "svg: the root frame holds %s bytes, the snapshot %d"
    % (rv.group(1) if rv else None, total))
ss = json.load(open(convert(".speedscope.json")))
prof = ss["profiles"][0]
chk(sum(prof["weights"]) == total if "weights" in prof else False,
    "speedscope: weights add up to %s, the snapshot %d" % (sum(prof.get("weights", [])), total))
hp = json.load(open(convert(".heapprofile")))


def node_sum(n):
    return n.get("selfSize", 0) + sum(node_sum(c) for c in n.get("children", []))


chk(node_sum(hp["head"]) == total, "heapprofile: %d bytes, the snapshot %d" % (node_sum(hp["head"]), total))
pb = convert(".pb.gz")
if shutil.which("go"):
    home = tempfile.mkdtemp(dir=work)
    env = dict(os.environ, HOME=home, GOCACHE=os.path.join(home, "gocache"), GOTELEMETRY="off")
    r = subprocess.run(["go", "tool", "pprof", "-top", "-unit=B", "-sample_index=inuse_space", pb],
                       capture_output=True, text=True, env=env, timeout=300)
    m_ = re.search(r"of (\d+)B total", r.stdout)
    chk(m_ and int(m_.group(1)) == total, "go tool pprof: %s total, the snapshot %d: %s"
        % (m_.group(1) if m_ else None, total, (r.stdout + r.stderr)[-400:]))
else:
    chk(False, "go not installed (scripts/setup.sh --tests installs golang-go)")
chk(gzip.open(pb).read(2) != b"", "pprof: a gzip'd profile")
ht = convert(".heaptrack.zst")
r = subprocess.run(["heaptrack_print", "-f", ht], capture_output=True, text=True, timeout=300)
m_ = re.search(r"^calls to allocation functions: (\d+)", r.stdout, re.M)
chk(r.returncode == 0 and m_ and int(m_.group(1)) == j.get("objects"),
    "heaptrack_print: an allocation per object (%s of %s): %s"
    % (m_.group(1) if m_ else None, j.get("objects"), (r.stdout + r.stderr)[-300:]))
# A stream from a FIFO (<(...)): told from a snapshot without reading it
# twice (the first bytes were lost to the test for the magic).
fifo = os.path.join(work, "fifo")
os.mkfifo(fifo)
writer = subprocess.Popen(["sh", "-c", 'cat "$0" > "$1"', new + ".ljm", fifo])
r = subprocess.run([ljm, "convert", "-o", os.path.join(work, "fifo.folded"), fifo], capture_output=True,
                   text=True, timeout=120)
writer.wait(60)
chk(r.returncode == 0 and os.path.getsize(os.path.join(work, "fifo.folded")) > 0,
    "convert an ljm stream from a FIFO: exit %d %s" % (r.returncode, r.stderr))
r = subprocess.run([ljm, "convert", "-o", os.path.join(work, "x.txt"), new], capture_output=True, text=True)
chk(r.returncode == 2 and r.stderr.count("\n") == 1 and "ljm heap" in r.stderr,
    "text of a snapshot: a usage error pointing at ljm heap: %r" % r.stderr)
sys.exit(chk.done(40))
