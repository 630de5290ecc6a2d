#!/usr/bin/env python3
"""snapshot_test.py -- heap snapshots (rec.snapshot) of the real LuaJIT under
test (testlib.VM), read by an independent reader (ljhread.py) and by
`ljm heap`: known structures (a cache of 10000 strings, objects with a
metatable, a suspended coroutine holding a table, weak keys, a cycle, a
closure's upvalue, cdata) with their types, labels, edges and sizes; the
sizes against the VM's own count; the cache's growth between two
snapshots; a snapshot in the middle of a --stacks recording leaving it
intact; an unwritable path refused.
usage: snapshot_test.py SOFILE LJM SNAPSHOT_LUA"""
import json
import os
import subprocess
import sys

import ljhread
import testlib

import ljmread  # tests/lib/ljmread.py, the shared stream reader

res = testlib.Results("snapshot")
so, ljm, script = (testlib.runfile(a) for a in sys.argv[1:4])
out = testlib.scratch("snapshot")
env = testlib.module_cpath(so, "snapshot_cpath")
p = subprocess.run([testlib.LUAJIT, script, out], capture_output=True, text=True, env=env,
                   timeout=300)
sys.stdout.write(p.stdout)
sys.stderr.write(p.stderr)
res.check(p.returncode == 0, "snapshot.lua exit status %d" % p.returncode)
said = dict(line.split("\t", 1) for line in p.stdout.splitlines() if "\t" in line)
for k in ("heap", "grown", "during"):
    res.check(said.get(k) == "true", "rec.snapshot (%s): %r" % (k, said.get(k)))
res.check(said.get("bad", "").startswith("nil\t/nonexistent-dir/x.ljh") and
          said["bad"].endswith("\t2"), "unwritable path: nil, message, ENOENT: %r" % said.get("bad"))
res.check(not [f for f in os.listdir(out) if ".tmp" in f], "no temporary file left")

build, total, objs = ljhread.read(open(os.path.join(out, "heap.ljh"), "rb").read())
res.check(testlib.build_is_vm_flavour(build + " ("), "build: %r" % build)
root = objs.get(0)
res.check(root is not None and root.type == "root", "the root comes first, at address 0")
dangling = [(o.addr, e) for o in objs.values() for e in o.edges if e[2] not in objs]
res.check(not dangling, "every edge's target is in the snapshot: %s" % dangling[:3])


def named(o, name):
    """Targets of o's edges under a name or a string key."""
    got = []
    for kind, weak, target, what in o.edges:
        if kind == ljhread.NAME and what == name:
            got.append(objs[target])
        elif kind == ljhread.STRKEY and objs[what].label == name:
            got.append(objs[target])
    return got


G = named(root, "_G")
res.check(len(G) == 1 and G[0].type == "table", "root -> _G")
G = G[0]
cache = named(G, "cache")
res.check(len(cache) == 1 and cache[0].type == "table", "_G.cache")
cache = cache[0]
idx = [objs[t] for k, w, t, i in cache.edges if k == ljhread.INDEX]
res.check(len(idx) == 10000 and all(o.type == "string" and o.label.startswith("cached string ")
                                    for o in idx), "cache: 10000 strings by index (%d)" % len(idx))
res.check(all(o.size >= 16 + len(o.label) for o in idx), "string sizes cover their bytes")
res.check(cache.size >= 10000 * 8, "the cache table's size holds its array: %d" % cache.size)

points = named(G, "points")[0]
pts = [objs[t] for k, w, t, i in points.edges if k == ljhread.INDEX]
mts = {named(o, "metatable")[0].addr for o in pts if named(o, "metatable")}
res.check(len(pts) == 100 and len(mts) == 1, "100 points, one metatable (%d, %d)" % (len(pts), len(mts)))
mt = objs[mts.pop()] if mts else None
res.check(mt is not None and any(o.label == "Point" for o in named(mt, "__name")),
          "the metatable's __name is Point")

co = named(G, "suspended")
res.check(len(co) == 1 and co[0].type == "thread", "_G.suspended is a thread")
held = [(what, objs[t]) for k, w, t, what in co[0].edges
        if k == ljhread.NAME and objs[t].type == "table"]
held = [(what, h) for what, h in held
        if any(objs[t].label == "held by a coroutine" for k2, w2, t, i in h.edges)]
# The slot is named by the local the coroutine's function has there, at the
# instruction it is suspended at (its call of coroutine.yield).
res.check(len(held) == 1 and held[0][0].endswith("snapshot.lua:16 local held"),
          "the suspended coroutine's stack holds the table, as its local 'held': %s"
          % [w for w, h in held])

weak = named(G, "weak")[0]
keys = [(w, objs[t]) for k, w, t, what in weak.edges if k == ljhread.KEY]
res.check(len(keys) == 10 and all(w and o.type == "table" for w, o in keys),
          "weak table: 10 key edges, all weak (%s)" % [w for w, o in keys])
cyc = named(G, "cycle")[0]
other = named(cyc, "other")
res.check(len(other) == 1 and named(other[0], "other") == [cyc], "a cycle: a.other.other == a")
tick = named(G, "tick")[0]
uv = named(tick, "upvalue n")  # upvalues by their names in the debug info
res.check(tick.type == "function" and len(uv) == 1 and uv[0].type == "upvalue" and
          named(uv[0], "value")[0].type == "table", "closure -> upvalue n -> table")
ses = named(G, "session")
res.check(len(ses) == 1 and ses[0].type == "userdata" and ses[0].label == "Session",
          "a userdata labelled by its metatable's __name: %s" % [(o.type, o.label) for o in ses])
sb = named(G, "sbuf")
if testlib.vm_flavour().startswith("tarantool"):  # no string.buffer there
    res.check(len(sb) == 0, "no string.buffer on Tarantool's fork: %s" % [o.type for o in sb])
else:
    res.check(len(sb) == 1 and sb[0].type == "userdata" and sb[0].label == "string.buffer" and
              sb[0].size >= 100000, "a string.buffer with its 100000 bytes: %s"
              % [(o.type, o.label, o.size) for o in sb])
buf = named(G, "buffer")
res.check(len(buf) == 1 and buf[0].type == "cdata" and buf[0].size >= 4096,
          "cdata of 4096 bytes: %s" % [(o.type, o.size) for o in buf])

# Sizes: after a full collection the objects add up to nearly what the VM
# counted (fixed strings nobody references, such as Lua's reserved words,
# are not reached).
count = float(said.get("count", "0"))
size = sum(o.size for o in objs.values())
res.check(abs(total - count) <= 4096, "gctotal %d vs collectgarbage(\"count\") %d" % (total, count))
res.check(0.97 * total <= size <= total, "objects %d bytes of the VM's %d" % (size, total))

# ljm heap agrees with this reader.
types = {}
for o in objs.values():
    if o.type != "root":
        c = types.setdefault(o.type, [0, 0])
        c[0] += 1
        c[1] += o.size
h = subprocess.run([ljm, "heap", "--json", os.path.join(out, "heap.ljh")], capture_output=True,
                   text=True)
j = json.loads(h.stdout) if h.returncode == 0 else {}
res.check({t["type"]: [t["count"], t["bytes"]] for t in j.get("types", [])} == types and
          j.get("gc_total") == total and j.get("build") == build,
          "ljm heap --json: %s" % h.stderr)
res.check([t["bytes"] for t in j.get("types", [])] == sorted((v[1] for v in types.values()),
                                                             reverse=True), "largest first")

# Retainers: what each object alone keeps alive (its dominator subtree),
# by its shortest path from a root.
h = subprocess.run([ljm, "heap", "--json", "--top", "100000", os.path.join(out, "heap.ljh")],
                   capture_output=True, text=True)
ret = {r["path"]: r for r in json.loads(h.stdout)["retainers"]} if h.returncode == 0 else {}
sizes = [r["retained_bytes"] for r in ret.values()]
res.check(sizes == sorted(sizes, reverse=True) or len(ret) > 0, "retainers listed")
want = cache.size + sum(o.size for o in idx)
res.check(ret.get("_G.cache", {}).get("retained_bytes") == want,
          "_G.cache retains itself and its 10000 strings: %s vs %d" % (ret.get("_G.cache"), want))
pt_bytes = points.size + sum(o.size for o in pts)
res.check(ret.get("_G.points", {}).get("retained_bytes", 0) >= pt_bytes,
          "_G.points retains its 100 points: %s vs >= %d" % (ret.get("_G.points"), pt_bytes))
wmt = named(weak, "metatable")[0]
res.check(ret.get("_G.weak", {}).get("retained_bytes") == weak.size + wmt.size,
          "_G.weak retains itself and its metatable, not its weak keys: %s vs %d"
          % (ret.get("_G.weak"), weak.size + wmt.size))
res.check(ret.get("_G.suspended", {}).get("type") == "thread" and
          ret["_G.suspended"]["retained_bytes"] > co[0].size, "the coroutine retains its stack's table")
res.check(ret.get("_G.cycle", {}).get("retained_bytes") == cyc.size + other[0].size
          if other else False, "the cycle: _G.cycle retains both tables")
res.check(any(p.startswith("_G.tick<upvalue n>") for p in ret), "a path through an upvalue: %s"
          % [p for p in ret if "tick" in p])

# The cache grew by 10000 strings between the snapshots.
_, _, grown = ljhread.read(open(os.path.join(out, "grown.ljh"), "rb").read())
ns = lambda os_: sum(1 for o in os_.values() if o.type == "string" and o.label.startswith("cached string "))
res.check(ns(grown) - ns(objs) == 10000, "grown: +10000 cached strings (%d -> %d)" % (ns(objs), ns(grown)))

# ljm heap --base: the growth by type and by retaining path.
gb = subprocess.run([ljm, "heap", "--json", "--base", os.path.join(out, "heap.ljh"),
                     os.path.join(out, "grown.ljh")], capture_output=True, text=True)
gj = json.loads(gb.stdout) if gb.returncode == 0 else {}
gt = {t["type"]: t for t in gj.get("types", [])}
res.check(gt.get("string", {}).get("count") == 10000, "--base: +10000 strings: %s" % gt.get("string"))
_, _, gobjs = ljhread.read(open(os.path.join(out, "grown.ljh"), "rb").read())
groot = gobjs[0]
gG = [gobjs[t] for k, w, t, what in groot.edges if k == ljhread.NAME and what == "_G"][0]
gcache = [gobjs[t] for k, w, t, what in gG.edges
          if k == ljhread.STRKEY and gobjs[what].label == "cache"][0]
gwant = gcache.size + sum(gobjs[t].size for k, w, t, i in gcache.edges if k == ljhread.INDEX)
gr = {r["path"]: r["retained_bytes"] for r in gj.get("retainers", [])}
res.check(gr.get("_G.cache") == gwant - want,
          "--base: _G.cache grew by %s, by hand %d" % (gr.get("_G.cache"), gwant - want))
res.check(gj.get("retainers", [{}])[0].get("retained_bytes", 0) >= gwant - want,
          "--base: the largest growth first")
# A value under an object key is matched by the key's address (objects do
# not move): _G.owned[table: 0x...] grew by its 100 new tables.
def owned_value(objs_):
    g = [objs_[t] for k, w, t, what in objs_[0].edges if k == ljhread.NAME and what == "_G"][0]
    named_ = {objs_[what].label: t for k, w, t, what in g.edges if k == ljhread.STRKEY}
    key = named_["owner"]
    v = [objs_[t] for k, w, t, what in objs_[named_["owned"]].edges
         if k == ljhread.OBJKEY and what == key][0]
    return key, v.size + sum(objs_[t].size for k, w, t, i in v.edges if k == ljhread.INDEX)
okey, oold = owned_value(objs)
gkey, onew = owned_value(gobjs)
opath = "_G.owned[table: 0x%x]" % gkey
res.check(okey == gkey and gr.get(opath) == onew - oold and onew - oold >= 100 * 32,
          "--base: %s grew by %s, by hand %d" % (opath, gr.get(opath), onew - oold))

# ljm heap --path-to: every shortest path to the objects whose label matches.
def paths_to(pattern):
    p = subprocess.run([ljm, "heap", "--json", "--path-to", pattern, os.path.join(out, "heap.ljh")],
                       capture_output=True, text=True)
    return json.loads(p.stdout)["matches"] if p.returncode == 0 else None


m = paths_to("^cached string 77$")
res.check(m and len(m) == 1 and m[0]["paths"] == ["_G.cache[77]"], "--path-to a cached string: %s" % m)
m = paths_to("^held by a coroutine$")
res.check(m and len(m) == 1 and m[0]["paths"][0].startswith("_G.suspended<") and
          m[0]["paths"][0].endswith("snapshot.lua:16 local held>[1]"),
          "--path-to through a coroutine's local: %s" % m)
m = paths_to("^counter state 7$")  # made at run time: no prototype holds it
res.check(m and m[0]["paths"] == ["_G.tick<upvalue n>.tag"],
          "--path-to through an upvalue: %s" % m)
for bad in (["--path-to", "(", os.path.join(out, "heap.ljh")],
            ["--path-to", "x", "--base", os.path.join(out, "heap.ljh"), os.path.join(out, "heap.ljh")]):
    b = subprocess.run([ljm, "heap"] + bad, capture_output=True, text=True)
    res.check(b.returncode == 2 and b.stderr.count("\n") == 1, "usage error %s: %r" % (bad[:2], b.stderr))

# The recording around the third snapshot.
r, info = ljmread.decode(ljmread.downgrade(open(os.path.join(out, "during.ljm"), "rb").read()))
res.check(info["complete"], "the --stacks recording is complete")
marks = {}
for n, text in enumerate(open(script), 1):
    for mark in ("-- before the snapshot", "-- the snapshot: no allocation here", "-- after it"):
        if mark in text:
            marks[mark] = "@%s:%d" % (script, n)
before, at, after = (testlib.count(r, "ALLOCATIONS", marks.get(m)) for m in
                     ("-- before the snapshot", "-- the snapshot: no allocation here", "-- after it"))
res.check(before >= 1000 and after >= 1000,
          "its events before and after the snapshot (%d, %d)" % (before, after))
# The snapshot itself allocates nothing through the VM and moves no GC step.
snap_c = sum(sum(cs) for (sec, name), cs in r.items()  # the C function, by any name
             if "snapshot" in name and not name.startswith("@"))
res.check(at == 0 and snap_c == 0 and
          testlib.count(r, "REALLOCATIONS", marks.get("-- the snapshot: no allocation here")) == 0,
          "no VM allocation on the snapshot's line or in its C function (%d, %d)" % (at, snap_c))
res.check(said.get("gc unchanged") == "true", "collectgarbage('count') unchanged by the snapshot")
rep = subprocess.run([ljm, "report", os.path.join(out, "during.ljm")], capture_output=True, text=True)
res.check(rep.returncode == 0 and not rep.stderr, "ljm report reads it: %s" % rep.stderr)

# ljm record --snapshot-at-exit: after the script, and from os.exit().
for code, src in ((0, "kept = {}\nfor i = 1, 500 do kept[i] = 'at exit ' .. i end\n"),
                  (3, "kept = {}\nfor i = 1, 500 do kept[i] = 'at exit ' .. i end\nos.exit(3)\n")):
    path = os.path.join(out, "exit%d.ljh" % code)
    r = subprocess.run([ljm, "record", "-o", os.path.join(out, "exit%d.ljm" % code),
                        "--snapshot-at-exit", path, "-"], input=src, capture_output=True,
                       text=True, env=testlib.vm_env(), timeout=120)
    ok = r.returncode == code and os.path.exists(path)
    if ok:
        _, _, ex = ljhread.read(open(path, "rb").read())
        ok = sum(1 for o in ex.values() if o.type == "string" and o.label[8:].isdigit()
                 and o.label.startswith("at exit ")) == 500
    res.check(ok, "--snapshot-at-exit, exit %d: %d %s" % (code, r.returncode, r.stderr))
    res.check(testlib.rows(os.path.join(out, "exit%d.ljm" % code))[1]["complete"],
              "the whole-run recording is complete too (exit %d)" % code)
r = subprocess.run([ljm, "record", "--snapshot-at-exit", "/nonexistent-dir/x.ljh", "-o",
                    os.path.join(out, "x.ljm"), "-"], input="", capture_output=True, text=True,
                   env=testlib.vm_env(), timeout=120)
res.check(r.returncode == 1 and r.stderr.count("\n") == 1 and "heap snapshot" in r.stderr,
          "unwritable snapshot: exit 1, one line: %r" % r.stderr)
res.finish()
