#!/usr/bin/env python3
"""layers_test: the recorder's folders are layers (recorder/README.md).

Reads every #include of recorder/{api,capture,stream,vm,base}/ and checks:
each file includes only its own layer and those below it (and the public
header ljm_recorder.h, which includes nothing of ours); LuaJIT's internal
headers come only through vm/lj.h; base/ includes no LuaJIT header at all;
only capture/flavour_unit.c includes .c files; no two files include each
other, directly or through others.

usage: layers_test.py FILE...   (the recorder's sources, as Bazel passes them)
"""
import os
import re
import sys

LAYERS = ["base", "vm", "stream", "capture", "api"]  # bottom to top
INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.M)
LUAJIT_PUBLIC = {"lua.h", "lauxlib.h", "lualib.h", "luajit.h"}


def layer_of(path):
    """'recorder/vm/lj.h' -> 'vm'; None outside the layers."""
    parts = path.split("/")
    if len(parts) == 3 and parts[0] == "recorder" and parts[1] in LAYERS:
        return parts[1]
    return None


def main(paths):
    files = {}
    for p in paths:
        i = p.find("recorder/")
        rel = p[i:] if i >= 0 else p
        if layer_of(rel):
            with open(p, encoding="utf-8") as f:
                files[rel] = f.read()
    bad = []
    edges = {}
    for rel, text in sorted(files.items()):
        mine = LAYERS.index(layer_of(rel))
        edges[rel] = []
        for kind, inc in INCLUDE.findall(text):
            if kind == "<":
                if layer_of(rel) == "base" and inc in LUAJIT_PUBLIC:
                    bad.append("%s: includes <%s>: base/ needs no LuaJIT" % (rel, inc))
                continue
            if inc == "recorder/ljm_recorder.h":
                continue
            if inc.startswith("recorder/"):
                lay = layer_of(inc)
                if lay is None:
                    bad.append("%s: includes %s, outside the layers" % (rel, inc))
                    continue
                if inc not in files:
                    bad.append("%s: includes %s, which is not there" % (rel, inc))
                if LAYERS.index(lay) > mine:
                    bad.append("%s: includes %s, a layer above its own (%s)" % (rel, inc, lay))
                if inc.endswith(".c") and rel != "recorder/capture/flavour_unit.c":
                    bad.append("%s: includes a .c file (%s): only the flavour unit does" % (rel, inc))
                edges[rel].append(inc)
            elif inc.startswith("lj_") or inc == "ljm_flavour.h":
                if rel != "recorder/vm/lj.h" and not (inc == "ljm_flavour.h" and mine > 0):
                    bad.append("%s: includes LuaJIT's %s: only vm/lj.h does" % (rel, inc))
                if mine == 0:
                    bad.append("%s: includes %s: base/ needs no LuaJIT" % (rel, inc))
            elif inc in LUAJIT_PUBLIC:
                if mine == 0:
                    bad.append("%s: includes %s: base/ needs no LuaJIT" % (rel, inc))
            else:
                bad.append("%s: includes \"%s\": our headers are named from the top" % (rel, inc))
    # Cycles: an iterative depth-first search over the include graph.
    state = {}
    for start in sorted(edges):
        if state.get(start):
            continue
        stack = [(start, iter(edges[start]))]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                chain = [n for n, _ in stack]
                bad.append("include cycle: " + " -> ".join(chain[chain.index(nxt):] + [nxt]))
            elif not state.get(nxt) and nxt in edges:
                state[nxt] = 1
                stack.append((nxt, iter(edges[nxt])))
    per_layer = {lay: sum(1 for r in files if layer_of(r) == lay) for lay in LAYERS}
    if any(n == 0 for n in per_layer.values()):
        bad.append("a layer with no file: %s (the test read the wrong files?)" % per_layer)
    for b in bad:
        print("FAIL " + b)
    print("layers_test: %d files, %d includes between them; %s"
          % (len(files), sum(len(v) for v in edges.values()),
             ", ".join("%s %d" % (lay, per_layer[lay]) for lay in reversed(LAYERS))))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
