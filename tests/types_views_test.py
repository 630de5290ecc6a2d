#!/usr/bin/env python3
"""types_views_test.py -- allocation types in the views, against the tests'
own reader (ljmread.type_totals: a replay of the stream's 0x29 items).

testdata/recorder/types/types.lua recorded by `ljm record --stacks` (the
system's LuaJIT, JIT on):
* `ljm report --by type`: each type's allocated, freed-and-in-use figures
  are the reader's;
* JSON: `types` gives the same figures, and its sums equal the totals
  (but the frees of blocks made before the recording);
* go tool pprof -tags: the label `type` holds each type's allocations and
  bytes in use;
* --group-by type: folded roots "type=NAME" carry each type's bytes;
  heaptrack_print -F's roots each type's allocations;
* --label type=table: the report of tables alone is the reader's tables;
* `ljm top --once --by type` lists the types;
* a label of the program's own named "type" is left out of the typed
  sets (JSON's label sets and pprof's tags name the VM's type only);
* a typed stream with no event in view: an empty table, not an error;
* a standard recording: --by type refused in one line.
usage: types_views_test.py LJM TYPES_LUA"""
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

LJM = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
SCRIPT = os.path.join(TMP, "types.lua")
shutil.copy(sys.argv[2], SCRIPT)
check = Checks("types_views")


def run(args, **kw):
    env = dict(os.environ, HOME=TMP, PPROF_TMPDIR=TMP)
    return subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=TMP, env=env, **kw)


prof = os.path.join(TMP, "types.ljm")
p = run([LJM, "record", "--stacks", "-o", prof, SCRIPT, "200"])
check(p.returncode == 0, "recorded (%r)" % p.stderr[-300:])
with open(prof, "rb") as f:
    st = ljmread.parse(f.read())
want = ljmread.type_totals(st)  # name -> [allocated, allocs, in use, blocks in use]
check(len(want) >= 10 and want["table"][1] >= 1000, "the reader finds 10 types or more (%s)" % want)


def report_rows(text):
    """report --by type's rows: name -> [allocated, allocs, in use, blocks, freed, frees]."""
    rows = {}
    m = re.search(r"^BY TYPE .*\n.*\n((?:.*\S.*\n)*)", text, re.M)
    for line in (m.group(1) if m else "").splitlines():
        f = line.split()
        rows[f[-1]] = [int(f[2].rstrip("B")), int(f[3]), int(f[0].rstrip("B")), int(f[1]),
                       int(f[4].rstrip("B")), int(f[5])]
    return rows


p = run([LJM, "report", "--by", "type", prof])
rows = report_rows(p.stdout)
unknown = rows.pop("(none)", None)  # frees of blocks made before the recording
check(p.returncode == 0 and {k: v[:4] for k, v in rows.items()} == want,
      "report --by type: the reader's figures per type (%s; %s)" % (rows, want))
check(unknown is None or unknown[:4] == [0, 0, 0, 0], "(none): frees only (%s)" % unknown)

out = os.path.join(TMP, "types.json")
p = run([LJM, "convert", "-q", "-o", out, prof])
doc = json.load(open(out)) if p.returncode == 0 else {}
types = {t["type"]: [t["alloc_bytes"], t["alloc_count"], t["inuse_bytes"], t["inuse_count"]]
         for t in doc.get("types", [])}
check(types == want, "JSON types: the reader's figures (%s)" % types)
tot = doc.get("totals", {})
check(sum(v[0] for v in types.values()) == tot.get("alloc_bytes") and
      sum(v[2] for v in types.values()) == tot.get("inuse_bytes"),
      "JSON types add up to the totals (%s)" % {k: tot.get(k) for k in ("alloc_bytes", "inuse_bytes")})
typed = [s for s in doc.get("label_sets", []) if "type" in s["labels"]]
check(typed and all(s["id"] > 4096 for s in typed), "JSON label sets: the typed ones after the stream's")

pb = os.path.join(TMP, "types.pb.gz")
p = run([LJM, "convert", "-q", "-o", pb, prof])
check(p.returncode == 0, "convert to pprof (%r)" % p.stderr)


for index, col in (("alloc_objects", 1), ("inuse_space", 2)):
    r = run(["go", "tool", "pprof", "-tags", "-unit=B", "-sample_index=" + index, pb])
    got = tag_values(r.stdout, "type")
    exp = {k: float(v[col]) for k, v in want.items() if v[col]}
    check(r.returncode == 0 and got == exp,
          "go tool pprof -tags -sample_index=%s: type=NAME as the reader (%s; %s)"
          % (index, got, exp))

# -tagfocus (doc/types.md): the samples of one type only, their total the reader's
# (every node shown: pprof leaves small ones out of its sum by default)
r = run(["go", "tool", "pprof", "-tagfocus=type=string", "-top", "-unit=B", "-nodefraction=0",
         "-nodecount=1000000", "-sample_index=alloc_space", pb])
m = re.search(r"Showing nodes accounting for (\d+)B?, [\d.]+% of (\d+)B? total", r.stdout)
check(r.returncode == 0 and m and int(m.group(1)) == want["string"][0] and
      int(m.group(2)) == tot.get("alloc_bytes"),
      "go tool pprof -tagfocus=type=string: %s, the reader's string bytes %d of %s"
      % (m and m.groups(), want.get("string", [0])[0], tot.get("alloc_bytes")))


for value, col in (("alloc_bytes", 0), ("inuse_bytes", 2)):
    p = run([LJM, "convert", "-q", "-f", "folded", "--group-by", "type", "--value", value, "-o", "-",
             prof])
    got = folded_roots(p.stdout)
    exp = {"type=" + k: v[col] for k, v in want.items() if v[col]}
    check(p.returncode == 0 and got == exp, "folded --group-by type --value %s: a root per type "
          "with the reader's figure (%s; %s)" % (value, got, exp))
ht = os.path.join(TMP, "types.heaptrack.gz")
p = run([LJM, "convert", "-q", "--group-by", "type", "-o", ht, prof])
stacks = ht + ".stacks"
p = run(["heaptrack_print", "-f", ht, "-F", stacks, "--flamegraph-cost-type", "allocations"])
got = folded_roots(open(stacks).read()) if p.returncode == 0 and os.path.exists(stacks) else {}
exp = {"type=" + k: v[1] for k, v in want.items() if v[1]}
check(got == exp, "heaptrack_print -F: a root per type with its allocations (%s; %s)" % (got, exp))

p = run([LJM, "report", "--label", "type=table", prof])
m = re.search(r"^ALLOCATIONS\n", p.stdout, re.M)
j = os.path.join(TMP, "tables.json")
q = run([LJM, "convert", "-q", "--label", "type=table", "-o", j, prof])
t = json.load(open(j))["totals"] if q.returncode == 0 else {}
check(p.returncode == 0 and m and "FILTER: only blocks allocated under type=table" in p.stdout and
      [t.get("alloc_bytes"), t.get("alloc_count"), t.get("inuse_bytes"), t.get("inuse_count")]
      == want["table"], "--label type=table: the tables alone (%s; %s; %r)"
      % (t, want["table"], p.stdout[:300]))

p = run([LJM, "top", "--once", "--by", "type", prof])
check(p.returncode == 0 and re.search(r"\btable\b", p.stdout) and re.search(r"\bstring\b", p.stdout),
      "top --once --by type: the types listed (%r %r)" % (p.stdout[-400:], p.stderr[-200:]))

# A label of the program's own named "type".
mine = os.path.join(TMP, "mine.lua")
with open(mine, "w") as f:
    f.write('local rec = misc.memprof\nlocal keep = {}\nrec.label("type", "mine")\n'
            'for i = 1, 300 do keep[i] = {i} end\nrec.label("type", nil)\n')
mprof = os.path.join(TMP, "mine.ljm")
p = run([LJM, "record", "--time", "-o", mprof, mine])
j = os.path.join(TMP, "mine.json")
q = run([LJM, "convert", "-q", "-o", j, mprof])
sets = json.load(open(j))["label_sets"] if p.returncode == 0 and q.returncode == 0 else []
own = [s for s in sets if s["id"] <= 4096 and s["labels"].get("type") == "mine"]
typed = [s for s in sets if s["id"] > 4096]
check(own and typed and all(s["labels"].get("type") != "mine" for s in typed),
      "a label 'type' of the program's: in its own set, left out of the typed ones (%s)" % sets[:4])
pb = os.path.join(TMP, "mine.pb.gz")
q = run([LJM, "convert", "-q", "-o", pb, mprof])
r = run(["go", "tool", "pprof", "-tags", "-unit=B", "-sample_index=alloc_space", pb])
tags = tag_values(r.stdout, "type")
mt = ljmread.type_totals(ljmread.parse(open(mprof, "rb").read()))
check("mine" not in tags and tags == {k: float(v[0]) for k, v in mt.items() if v[0]},
      "pprof: one type tag a sample, the VM's (%s; %s)" % (tags, mt))

empty = os.path.join(TMP, "empty.ljm")
with open(empty, "wb") as f:
    f.write(b"ljs\x03\x00\x00\x00\x80ljm\x03\x0a\x00\x00\x80")
p = run([LJM, "report", "--by", "type", empty])
check(p.returncode == 0 and p.stdout.startswith("BY TYPE") and p.stderr == "",
      "a typed stream without events: --by type gives an empty table (%r %r)" % (p.stdout[:200], p.stderr))
for args in (["--label", "type=table"], ["--group-by", "type", "-f", "folded"]):
    cmd = [LJM, "report"] + args[:2] + [empty] if args[0] == "--label" else \
        [LJM, "convert", "-q"] + args + ["-o", os.path.join(TMP, "e.folded"), empty]
    p = run(cmd)  # convert has nothing to draw (no events), but says nothing of labels
    check((p.returncode == 0 or args[0] != "--label") and "label" not in p.stderr,
          "%s on it: not refused for labels (%r)" % (args, p.stderr))

plain = os.path.join(TMP, "plain.ljm")
p = run([LJM, "record", "-o", plain, SCRIPT, "20"])
p = run([LJM, "report", "--by", "type", plain])
check(p.returncode != 0 and p.stderr.count("\n") == 1 and "no allocation types" in p.stderr,
      "--by type of a standard recording: refused in one line (%r)" % p.stderr)
sys.exit(check.done(minimum=20))
