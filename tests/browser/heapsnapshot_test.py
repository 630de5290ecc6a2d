#!/usr/bin/python3
"""`ljm convert -o x.heapsnapshot SNAPSHOT.ljh` in Chromium's own DevTools.

A heap snapshot is taken of the system's LuaJIT running the recorder's
snapshot scenario (testdata/recorder/cases/snapshot.lua: a cache of 10000
strings, 100 tables with the metatable "Point", a coroutine, cdata, ...),
converted, and:
  * the file is JSON shaped as its meta block says: node and edge arrays of
    whole records, every edge's to_node the first field of a node, the edge
    counts adding up, every name a strings index, node 0 the synthetic root;
  * DevTools' Memory panel (devtools://devtools/bundled/devtools_app.html)
    loads it through "Load profile", lists it under "Heap snapshots", and its
    Summary shows, per constructor, the object count and shallow size that
    the independent reader (tests/lib/ljhread.py) computes from the .ljh:
    tables by their metatable's __name ("Point" x100) or "table", strings as
    DevTools' "(string)", functions as its "Function", prototypes and traces
    as its "(compiled code)", the other Lua types by name;
  * its Retainers pane shows a Point object as "[k] in table", that table as
    "points in table", k being the index under which the snapshot has it;
  * the functions under "Function" read as the snapshot names closures, by
    where they are kept (string.rep, table.move, tick), none by an
    address or a raw first line ("0x7fa3e3d59730()", "move:-1()").
The Summary screenshot goes to the test's outputs and /tmp/browser-shots.
usage: heapsnapshot_test.py --ljm LJM --so RECORDER_SO --script SNAPSHOT_LUA [...]"""
import collections
import json
import os
import re
import subprocess
import sys

import browser_lib as B
import devtools_lib as D

import ljhread
import testlib

T = B.T
NODE_FIELDS, EDGE_FIELDS = 7, 3

DEEP = D.DEEP
poll = D.poll

# The loaded snapshot in the sidebar, once parsed: "lua (761 kB)".
ITEM = r"""(prefix) => { %s
  const li = deep(document, "li").find((e) => {
    const t = e.innerText.replace(/\s+/g, " ").trim();
    return t.startsWith(prefix) && /\([0-9.,]+ [kMG]?B\)$/.test(t); });
  return li ? center(li) : null; }""" % DEEP

ROWS = r"""() => { %s
  return deep(document, "tr.data-grid-data-grid-node").map((tr) =>
    [...tr.cells].map((c) => c.innerText.replace(/\s+/g, " ").trim())); }""" % DEEP


def take_snapshot(so, script, work):
    env = testlib.module_cpath(so, "heapsnapshot_cpath")
    p = subprocess.run(["luajit", script, work], capture_output=True, text=True, env=env, timeout=120)
    if p.returncode != 0:
        sys.exit("snapshot.lua: exit %d: %s" % (p.returncode, p.stderr))
    return os.path.join(work, "heap.ljh")


def expected_summary(objs):
    """Constructor -> [count, shallow bytes], as the exporter names nodes and
    DevTools groups them (its own names for strings, closures and code)."""
    def mt_name(o):
        for kind, weak, t, what in o.edges:
            if kind == ljhread.NAME and what == "metatable":
                for k2, w2, t2, key in objs[t].edges:
                    if k2 == ljhread.STRKEY and objs[key].label == "__name" and objs[t2].type == "string":
                        return objs[t2].label
        return None

    out = collections.defaultdict(lambda: [0, 0])
    for o in objs.values():
        if o.type == "root":
            continue
        if o.type in ("table", "userdata"):
            name = mt_name(o) or o.type
        elif o.type == "string":
            name = "(string)"
        elif o.type in ("function", "C function"):
            name = "Function"
        elif o.type in ("prototype", "trace"):
            name = "(compiled code)"
        else:
            name = o.type
        out[name][0] += 1
        out[name][1] += o.size
    return out


def check_shape(doc, objs):
    meta = doc["snapshot"]["meta"]
    nodes, edges, strings = doc["nodes"], doc["edges"], doc["strings"]
    T.check(len(meta["node_fields"]) == NODE_FIELDS and len(meta["edge_fields"]) == EDGE_FIELDS,
            "meta: field lists")
    T.check(len(nodes) == NODE_FIELDS * doc["snapshot"]["node_count"] == NODE_FIELDS * len(objs),
            "nodes: %d fields for %d objects" % (len(nodes), len(objs)))
    T.check(len(edges) == EDGE_FIELDS * doc["snapshot"]["edge_count"], "edges: whole records")
    T.check(sum(nodes[i + 4] for i in range(0, len(nodes), NODE_FIELDS)) * EDGE_FIELDS == len(edges),
            "edge counts add up to the edges")
    T.check(all(e % NODE_FIELDS == 0 and e < len(nodes) for e in edges[2::EDGE_FIELDS]),
            "every to_node is a node's first field")
    types = meta["node_types"][0]
    T.check(types[nodes[0]] == "synthetic", "node 0 is the synthetic root")
    T.check(all(0 <= n < len(strings) for n in nodes[1::NODE_FIELDS]), "node names are strings")
    etypes = meta["edge_types"][0]
    named = [i for i in range(0, len(edges), EDGE_FIELDS) if etypes[edges[i]] not in ("element", "hidden")]
    T.check(all(0 <= edges[i + 1] < len(strings) for i in named), "edge names are strings")
    T.check(len(set(nodes[2::NODE_FIELDS])) == len(objs), "node ids unique")


# The first cell of a row whose name starts with `name`: where to click.
ROW = r"""(name) => { %s
  const tr = deep(document, "tr.data-grid-data-grid-node").find((t) =>
    t.cells[0] && t.cells[0].innerText.replace(/\s+/g, "").startsWith(name));
  if (!tr) return null;
  const r = tr.cells[0].getBoundingClientRect();
  return {x: r.left + 12, y: r.top + r.height / 2, text: tr.cells[0].innerText.replace(/\s+/g, "")}; }""" % DEEP


def check_retainers(br, objs):
    """Expands "Point", selects its first object: the Retainers pane must show
    it as an element of the table that _G.points is, at the index the
    snapshot gives (node ids are 2 * index + 1, in the .ljh's order)."""
    row = poll(br, ROW, "Point×", 10)
    br.call("click", x=row["x"], y=row["y"])  # the disclosure triangle
    inst = poll(br, ROW, "Point@", 10)
    br.call("click", x=inst["x"] + 80, y=inst["y"])
    want_idx = None
    obj = list(objs.values())[(int(inst["text"].split("@")[1]) - 1) // 2]
    points = [o for o in objs.values() if any(t == obj.addr and k == ljhread.INDEX for k, w, t, i in o.edges)]
    for o in points:
        for k, w, t, i in o.edges:
            if t == obj.addr and k == ljhread.INDEX:
                want_idx = i
    # DevTools spaces "[7] in table @12" with CSS: the text has no blanks.
    rows = poll(br, """() => { const r = (%s)().map((c) => c[0].replace(/\\s+/g, ""));
      return r.some((t) => /^pointsintable@/.test(t)) ? r : null; }""" % ROWS, None, 10)
    br.screenshot("heapsnapshot_devtools_retainers.png")
    T.check(want_idx is not None and any(t.startswith("[%d]intable@" % want_idx) for t in rows),
            "DevTools Retainers of %s: [%s] in table: %r"
            % (inst["text"], want_idx, [t for t in rows if "intable" in t][:4]))


# The heap grid's "Show all N" button under an expanded constructor.
SHOW_ALL = r"""() => { %s
  const b = deep(document, "button, devtools-button, [role=button]").find((e) =>
    /^Show all [0-9,]+$/.test(e.textContent.trim()));
  return b ? center(b) : null; }""" % DEEP


def check_function_names(br, count):
    """Expands "Function" (count instances): its instances must read as the
    snapshot names its closures (string.rep, table.move, tick), none by an
    address. The grid draws only the rows in view, and the first 100
    instances until "Show all" is pressed: both, before the rows are read."""
    row = poll(br, ROW, "Function×", 10)
    br.call("click", x=row["x"], y=row["y"])
    poll(br, """() => { const r = (%s)().filter((c) => /\(\) ?@[0-9]+$/.test(c[0].replace(/\s+/g, " ")));
      return r.length > 20 ? r : null; }""" % ROWS, None, 10)
    br.screenshot("heapsnapshot_devtools_functions.png")
    br.call("viewport", width=1400, height=max(1000, 24 * (count + 40)))
    try:
        button = poll(br, SHOW_ALL, None, 5)
        br.call("click", x=button["x"], y=button["y"])
    except RuntimeError:
        pass  # 100 instances or fewer: no button
    rows = poll(br, """(n) => { const r = (%s)().map((c) => c[0].replace(/\s+/g, " "));
      return r.filter((t) => /\(\) ?@[0-9]+$/.test(t)).length >= n ? r : null; }""" % ROWS, count, 10)
    br.call("viewport", width=1400, height=1000)
    shown = [t for t in rows if re.search(r"\(\) ?@[0-9]+$", t)]  # "name() @id", not "Point @id"
    T.check(len(shown) == count, "DevTools lists %d functions, the snapshot has %d" % (len(shown), count))
    for name in ("string.rep", "table.move", "tick"):
        T.check(any(t.startswith(name + "()") or t.startswith(name + " ()") for t in shown),
                "DevTools shows the function %s by name: %r" % (name, shown[:12]))
    T.check(not [t for t in shown if re.match(r"^(C function )?0x[0-9a-f]+", t) or ":-1" in t],
            "DevTools names no function by its address: %r"
            % [t for t in shown if "0x" in t or ":-1" in t][:5])


def kb(text):
    m = re.match(r"^([0-9.,]+) kB", text)
    return float(m.group(1).replace(",", "")) * 1000 if m else None


def main():
    p = B.argparse.ArgumentParser()
    p.add_argument("--ljm", required=True)
    p.add_argument("--so", required=True)
    p.add_argument("--script", required=True)
    p.add_argument("--npm-dir", default="/var/cache/ljmkit/npm")
    p.add_argument("--chromium", default="/usr/bin/chromium")
    args = p.parse_args()
    args.ljm = os.path.abspath(args.ljm)
    work = B.tmpdir("heapsnapshot-")
    ljh = take_snapshot(os.path.abspath(args.so), os.path.abspath(args.script), work)
    _, _, objs = ljhread.read(open(ljh, "rb").read())
    data = B.convert(args.ljm, ljh, os.path.join(work, "lua.heapsnapshot"))
    doc = json.loads(data)
    check_shape(doc, objs)
    want = expected_summary(objs)
    T.check(want.get("Point", [0])[0] == 100, "the reader finds 100 Point objects: %s" % want.get("Point"))

    br = B.Browser(args)
    try:
        D.load_profile(br, data, "lua.heapsnapshot")
        item = poll(br, ITEM, "lua (", 30)
        rows = None
        for _ in range(3):  # a click while DevTools still builds the view may be lost
            br.call("click", x=item["x"], y=item["y"])
            try:
                rows = poll(br, "(n) => { const r = (%s)(); return r.length >= n ? r : null; }" % ROWS,
                            len(want), 10)
                break
            except RuntimeError:
                pass
        if rows is None:
            raise RuntimeError("no Summary rows")
        br.screenshot("heapsnapshot_devtools_summary.png")
        shown = {}
        for r in rows:
            m = re.match(r"^(.*?)(?:×([0-9,]+))?$", r[0])
            if m:
                shown[m.group(1).strip()] = (int((m.group(2) or "1").replace(",", "")), kb(r[2]))
        for name, (count, size) in sorted(want.items()):
            got = shown.get(name)
            # DevTools prints sizes in kB, rounded to 3 significant digits.
            ok = got and got[0] == count and got[1] is not None and abs(got[1] - size) <= max(50, size * 0.006)
            T.check(ok, "DevTools Summary %r: shows %r, the snapshot has %d objects of %d bytes"
                    % (name, got, count, size))
        check_retainers(br, objs)
        check_function_names(br, want["Function"][0])
        errs = [m for m in br.call("log") if m["type"] == "pageerror"]
        T.check(not errs, "DevTools page errors: %r" % errs[:5])
    except RuntimeError as e:
        T.check(False, "DevTools: %s (rows: %r)" % (e, br.eval(ROWS)))
        br.screenshot("heapsnapshot_devtools_failed.png")
    finally:
        br.close()
    print("heapsnapshot_test: %d checks passed" % T.CHECKS.passed)
    T.finish("heapsnapshot_test", 1)


main()
