#!/usr/bin/env python3
"""heap_graph_test.py -- `ljm heap --format dot|mermaid`: what retains a real
program's objects (testdata/heap/app.lua under the system's LuaJIT), drawn.

For --path-to Point, --top Point (a type), the top retainers and tight
limits (--depth 1, --max 5):
  * Debian's dot renders the DOT (dot -Tsvg, no warning) with a node and an
    edge in the SVG per node and edge written;
  * every edge drawn is a strong reference of the snapshot, as the
    independent reader (tests/lib/ljhread.py) reads it from the file: from
    the object (or the roots) to the object, named by its key, index or
    slot;
  * the picked objects (filled) are Points; every other node leads to one;
    no more objects than --max, no deeper than --depth;
  * the mermaid flowchart draws the same nodes and edges.
testdata/heap/names.lua's keys and __name (quotes, '#', '<', '|', '`', '&',
a newline, a control byte, invalid UTF-8): dot renders it; mermaid's texts
hold no raw '"', '<', '|' or '#' (mermaid's own parser reads it in
tests/browser/heap_graph_browser_test.py). Usage errors in one line.
usage: heap_graph_test.py LJM APP_DIR"""
import collections
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
chk = Checks("heap_graph")
work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
for f in ("app.lua", "sessmod.lua", "names.lua"):
    shutil.copy(os.path.join(app_dir, f), work)

DOT_NODE = re.compile(r'^  "([^"]+)" \[label="((?:[^"\\]|\\.)*)"(.*)\];$')
DOT_EDGE = re.compile(r'^  "([^"]+)" -> "([^"]+)" \[label="((?:[^"\\]|\\.)*)"\];$')
MM_NODE = re.compile(r'^  (\w+)(?:\(\["|\[")([^"]*)"\]\)?$', re.M)
MM_EDGE = re.compile(r'^  (\w+) -->\|"([^"]*)"\| (\w+)$')


def run(*args):
    return subprocess.run([ljm] + list(args), capture_output=True, timeout=300, cwd=work)


def heap(*args):
    r = run("heap", *args)
    chk(r.returncode == 0 and not r.stderr, "ljm heap %s: exit %d %s" % (" ".join(args), r.returncode,
                                                                      r.stderr[-300:]))
    return r.stdout.decode("utf-8")


def unescape_dot(s):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), s).replace("&amp;", "&")


def parse_dot(text):
    """({node id: (label, picked)}, [(from, to, label)], node ids in order),
    every line read."""
    nodes, edges, order, other = {}, [], [], []
    for line in text.split("\n")[1:]:  # not splitlines(): U+2028 is in names
        m, e = DOT_NODE.match(line), DOT_EDGE.match(line)
        if e:
            edges.append((e.group(1), e.group(2), unescape_dot(e.group(3))))
        elif m:
            nodes[m.group(1)] = (unescape_dot(m.group(2)), "filled" in m.group(3))
            order.append(m.group(1))
        elif line and not re.match(r"^(digraph retainers \{|  (graph|node|edge) \[.*\];|\})$", line):
            other.append(line)
    chk(not other, "dot: every line a node, an edge or the frame (%r)" % other[:3])
    chk(len(order) == len(set(order)), "dot: each node once (%d lines, %d ids)" % (len(order), len(set(order))))
    return nodes, edges, order


def parse_mermaid(text):
    """({node id as in dot: label}, [(from, to, label)], picked ids); a
    label's lines are lines of the file."""
    def key(i):
        return "roots" if i == "roots" else "0x" + i[1:]

    nodes, edges, picked, other = {}, [], set(), []
    for m in MM_NODE.finditer(text):
        nodes[key(m.group(1))] = m.group(2)
    lines = MM_NODE.sub("", text).split("\n")
    chk(lines[0].startswith("%% what retains ") and lines[1] == "flowchart TD",
        "mermaid: a comment, then flowchart TD (%r)" % lines[:2])
    for line in lines[2:]:
        e = MM_EDGE.match(line)
        if e:
            edges.append((key(e.group(1)), key(e.group(3)), e.group(2)))
        elif line.startswith("  class "):
            picked = {key(i) for i in line.split()[1].split(",")}
        elif line and line != "  classDef picked fill:#ffe0b2,stroke:#e65100":
            other.append(line)
    chk(not other, "mermaid: every line a node, an edge or the picked class (%r)" % other[:3])
    return nodes, edges, picked


def mermaid_text(s):
    """A mermaid text as shown: entity codes read, <br> a line break."""
    names = {"quot": '"', "lt": "<", "gt": ">", "amp": "&"}
    return re.sub(r"#(\w+);", lambda m: chr(int(m.group(1))) if m.group(1).isdigit()
                  else names[m.group(1)], s)


def clean(s):
    """A name as the outputs clean it: control characters '_', bad UTF-8 U+FFFD."""
    s = s.encode("latin-1").decode("utf-8", "replace")  # ljhread's text keeps the bytes
    return "".join("_" if ord(c) < 32 or 127 <= ord(c) < 160 else c for c in s)


def ident(s):
    return re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", s) is not None


def edge_ok(objs, root, frm, to, label):
    """Is frm -> to a strong reference of the snapshot named label?"""
    src = root if frm == "roots" else objs.get(int(frm, 16))
    if src is None or int(to, 16) not in objs:
        return False
    for kind, weak, target, what in src.edges:
        if weak or target != int(to, 16):
            continue
        if kind == ljhread.NAME and clean(what) == label:
            return True
        if kind == ljhread.INDEX and label == "[%d]" % what:
            return True
        if kind == ljhread.STRKEY:
            k = clean(objs[what].label)
            if label == k if ident(k) else label.startswith('["' + k[:50]):
                return True
        if kind == ljhread.OBJKEY and label.startswith("[") and ("%x" % what) in label:
            return True
        if kind == ljhread.KEY and label.startswith("<key"):
            return True
    return False


def more_refs(text):
    m = re.search(r"\n\+(\d+) more references? in$", text)
    return int(m.group(1)) if m else 0


def is_point(objs, o):
    for kind, weak, t, what in o.edges:
        if kind == ljhread.NAME and what == "metatable":
            for k2, _, t2, key in objs[t].edges:
                if k2 == ljhread.STRKEY and objs[key].label == "__name":
                    return objs[t2].label
    return None


def check_view(name, objs, root, args, picked_ok, depth=3, most=50, text_view=None, paths=3):
    dot = heap("--format", "dot", *args)
    mm = heap("--format", "mermaid", *args)
    nodes, edges, order = parse_dot(dot)
    chk(nodes and edges, "%s: nodes and edges drawn (%d, %d)" % (name, len(nodes), len(edges)))
    r = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, timeout=120)
    svg = r.stdout.decode("utf-8", "replace")
    chk(r.returncode == 0 and not r.stderr and svg.count('class="node"') == len(nodes) and
        svg.count('class="edge"') == len(edges),
        "%s: dot -Tsvg draws %d nodes and %d edges (exit %d, %r; %d, %d)"
        % (name, len(nodes), len(edges), r.returncode, r.stderr[-200:], svg.count('class="node"'),
           svg.count('class="edge"')))
    bad = [e for e in edges if not edge_ok(objs, root, *e)]
    chk(not bad, "%s: all %d edges are strong references of the snapshot, named so (%r)"
        % (name, len(edges), bad[:3]))
    picked = [n for n in order if nodes[n][1]]
    chk(picked and all(picked_ok(objs[int(n, 16)]) for n in picked),
        "%s: the %d picked objects are the view's" % (name, len(picked)))
    if text_view:  # (its arguments, its list): the text view's objects, in order, and references
        targs, key = text_view
        rows = json.loads(heap("--json", *targs)).get(key, [])
        into = collections.Counter(t for _, t, _ in edges)
        got = [(nodes[n][0].split("\n")[1], into[n] + more_refs(nodes[n][0])) for n in picked]
        chk(got == [(r["paths"][0], r["references"]) for r in rows[:len(picked)]],
            "%s: the picks are the text view's, in its order, each with its references drawn or "
            "counted as more (%r; %r)" % (name, got[:3], [(r["paths"][0], r["references"]) for r in rows[:3]]))
    ins = collections.Counter(t for _, t, _ in edges)
    chk(all(c <= paths for c in ins.values()), "%s: at most %d references drawn into an object (%s)"
        % (name, paths, ins.most_common(1)))
    chk(len(nodes) <= most, "%s: at most %d objects (%d)" % (name, most, len(nodes)))
    # Levels: a node's level is its distance to a picked node along edges.
    out = collections.defaultdict(set)
    for f, t, _ in edges:
        out[f].add(t)
    level, todo = {n: 0 for n in picked}, list(picked)
    into = collections.defaultdict(set)
    for f, t, _ in edges:
        into[t].add(f)
    while todo:
        n = todo.pop(0)
        for f in into[n]:
            if f not in level:
                level[f] = level[n] + 1
                todo.append(f)
    chk(set(level) == set(nodes) and max(level.values()) <= depth,
        "%s: every node leads to a picked one, within %d levels (%s)"
        % (name, depth, sorted(set(nodes) - set(level))[:3]))
    mnodes, medges, mpicked = parse_mermaid(mm)
    chk(set(mnodes) == set(nodes) and sorted(medges, key=repr) != [] and
        sorted((f, t, mermaid_text(l)) for f, t, l in medges) == sorted(edges) and
        mpicked == set(picked) and
        all(mermaid_text(mnodes[n]) == nodes[n][0] for n in nodes),
        "%s: mermaid draws the same nodes, edges and texts" % name)
    return nodes, edges, mm


r = run("record", "-o", "app.ljm", "app.lua", "300", "app.ljh")
chk(r.returncode == 0, "ljm record app.lua: %s" % r.stderr[-300:])
with open(os.path.join(work, "app.ljh"), "rb") as f:
    _, _, _, objs = ljhread.read_all(f.read())
root = next(o for o in objs.values() if o.type == "root")


def point(o):
    return is_point(objs, o) == "Point"


nodes, edges, _ = check_view("--path-to Point", objs, root, ["--path-to", "Point", "--top", "3", "app.ljh"],
                             point, text_view=(["--path-to", "Point", "--top", "3", "app.ljh"], "matches"))
labels = {l for _, _, l in edges}
chk({"[200]", "points", "_G"} <= labels and any("_G.points[200]" in t for t, _ in nodes.values()),
    "--path-to Point: _G -> points -> [200], the last Point made (app.lua's points[i]) (%s)"
    % sorted(labels))
check_view("--top Point", objs, root, ["--top", "Point", "app.ljh"], point,
           text_view=(["--top", "Point", "app.ljh"], "retainers"))
check_view("top retainers", objs, root, ["--top", "8", "--max", "20", "app.ljh"], lambda o: True, most=20,
           text_view=(["--top", "8", "app.ljh"], "retainers"))
check_view("--paths 1", objs, root, ["--top", "8", "--paths", "1", "app.ljh"], lambda o: True, paths=1,
           text_view=(["--top", "8", "--paths", "1", "app.ljh"], "retainers"))
nodes, edges, _ = check_view("--depth 1", objs, root,
                             ["--path-to", "Point", "--top", "2", "--depth", "1", "app.ljh"], point,
                             depth=1)
chk(len(nodes) == 3 and {l for _, _, l in edges} == {"[200]", "[199]"},
    "--depth 1: two Points and _G.points, nothing above (%s)" % sorted(nodes))
nodes, edges, _ = check_view("--max 3", objs, root, ["--path-to", "Point", "--top", "2", "--max", "3",
                                                     "app.ljh"], point, most=3)
chk(len(nodes) == 3, "--max 3: three objects drawn (%d)" % len(nodes))

# Names that DOT and mermaid treat specially.
r = run("record", "-o", "names.ljm", "names.lua", "names.ljh")
chk(r.returncode == 0, "ljm record names.lua: %s" % r.stderr[-300:])
with open(os.path.join(work, "names.ljh"), "rb") as f:
    _, _, _, nobjs = ljhread.read_all(f.read())
nroot = next(o for o in nobjs.values() if o.type == "root")
nodes, edges, mm = check_view("hostile names", nobjs, nroot, ["--path-to", "^Tar|%%\\{", "names.ljh"],
                              lambda o: (is_point(nobjs, o) or o.label).startswith("Tar") or "%%{" in o.label)
chk(any('Tar"get<b>#1|`x`&\\' in t for t, _ in nodes.values()) and
    any(l.startswith('["a "quoted" #key <b> |bar| `tick` &amp;_line_') for _, _, l in edges),
    "hostile names: the __name and the key as the snapshot has them, cleaned (%r)"
    % sorted(l for _, _, l in edges))
texts = re.findall(r'"([^"]*)"', mm) + [mm.split("\n")[0][3:]]  # and the title
chk(len(texts) > 10 and not any(c in t for t in texts for c in '<>|`_*~\\%{}:\u2028'),
    "hostile names: mermaid's texts and title hold none of < > | ` _ * ~ \\ % { } : U+2028 raw")
chk(any("%%{init" in t for t, _ in nodes.values()) and "%%" in mermaid_text(mm.split("\n")[0]),
    "hostile names: the directive-like key and the pattern shown, as text")

# Usage errors: one line, exit 2.
for args in (["--format", "dot", "--base", "app.ljh", "app.ljh"], ["--depth", "2", "app.ljh"],
             ["--format", "svg", "app.ljh"], ["--format", "dot", "--depth", "0", "app.ljh"],
             ["--format", "dot", "--max", "x", "app.ljh"], ["--json", "--format", "mermaid", "app.ljh"],
             ["--format", "dot", "--paths", "0", "app.ljh"], ["--format", "dot", "--top", "50", "app.ljh"],
             ["--format", "mermaid", "--top", "9", "--max", "9", "app.ljh"]):
    r = run("heap", *args)
    chk(r.returncode == 2 and r.stderr.count(b"\n") == 1 and not r.stdout,
        "ljm heap %s: a usage error in one line (%d %r)" % (" ".join(args), r.returncode, r.stderr))
# The last --format counts.
r = run("heap", "--format", "dot", "--format", "text", "app.ljh")
chk(r.returncode == 0 and not r.stdout.startswith(b"//"), "--format dot --format text: the text view")
r = run("heap", "--format", "mermaid", "--format", "json", "app.ljh")
chk(r.returncode == 0 and "retainers" in json.loads(r.stdout or b"{}"), "--format mermaid --format json: JSON")
sys.exit(chk.done(60))
