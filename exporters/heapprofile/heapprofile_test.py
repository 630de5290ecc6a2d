#!/usr/bin/python3
"""`ljm convert -f heapprofile` on the whole corpus.

For every testdata .ljm file and the hostile-names stream of export_testlib:
  * tests/lib/ljmread.py (an independent reader) says whether the
    stream is valid: an invalid one must fail, a valid one must convert, and
    the decoder's totals (JSON export) must equal the reader's;
  * the file is strict JSON in valid UTF-8 shaped as V8's
    HeapProfiler.SamplingHeapProfile: exactly "head" and "samples"; every
    node exactly callFrame {functionName, scriptId, url, lineNumber,
    columnNumber}, selfSize, id, children, with their types; unique ids; a
    "(root)" head without a script or position; no two siblings with the
    same callFrame; no empty branches (DevTools would prune them); one
    scriptId per url ("0" without one); 0-based lines, a line for every
    frame with a url (the file frame: its first), -1 without a url;
  * samples: exactly size, nodeId, ordinal; ordinals 1, 2, ...; each node's
    samples add up to its selfSize, as in V8;
  * selfSize adds up to the chosen figure's total in the JSON export and in
    the independent reader: inuse_bytes by default, alloc_bytes and
    peak_bytes with --value, the count kinds as their byte twins (for the
    sampled testdata/ext/sampled.ljm, the reader's estimates);
  * per path (root to node, every callFrame field), selfSize equals the self
    figures of the JSON export's call-tree nodes: the real stacks of
    testdata/ext/stacked.ljm, the frames.h paths of standard streams;
  * the suffix .heapprofile selects the format; `-o -` writes the same bytes.
"""
import json
import os
import subprocess
import sys

import export_testlib as T

TOTALS_PY = T.READER_PY
ROOT = {"functionName": "(root)", "scriptId": "0", "url": "", "lineNumber": -1, "columnNumber": -1}
# --value -> the figure selfSize holds
KINDS = {None: "inuse_bytes", "alloc_bytes": "alloc_bytes", "alloc_count": "alloc_bytes",
         "inuse_bytes": "inuse_bytes", "inuse_count": "inuse_bytes", "peak_bytes": "peak_bytes"}


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def no_constants(name):
    raise ValueError("non-standard JSON constant %s" % name)


def parse(tag, data):
    try:
        return json.loads(data.decode("utf-8", "strict"), parse_constant=no_constants)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        T.check(False, "%s: not strict JSON in UTF-8: %s" % (tag, e))
        return None


def walk(head):
    """(node, path of callFrames from the root's child down) depth first,
    without recursion."""
    out, todo = [], [(head, ())]
    while todo:
        n, path = todo.pop()
        out.append((n, path))
        for c in reversed(n.get("children", []) if isinstance(n, dict) else []):
            if isinstance(c, dict):
                todo.append((c, path + (json.dumps(c.get("callFrame"), sort_keys=True),)))
    return out


def check_shape(tag, doc):
    """V8's SamplingHeapProfile shape; returns {id: node} or None."""
    if not T.check(isinstance(doc, dict) and set(doc) == {"head", "samples"},
                   "%s: top-level keys %r" % (tag, sorted(doc) if isinstance(doc, dict) else doc)):
        return None
    ids, scripts, ok = {}, {}, True
    for n, path in walk(doc["head"]):
        nt = "%s node %r" % (tag, n.get("id") if isinstance(n, dict) else n)
        if not T.check(isinstance(n, dict) and set(n) == {"callFrame", "selfSize", "id", "children"},
                       "%s: keys %r" % (nt, sorted(n) if isinstance(n, dict) else n)):
            return None
        cf = n["callFrame"]
        if not T.check(isinstance(cf, dict) and set(cf) == set(ROOT),
                       "%s: callFrame keys %r" % (nt, cf)):
            return None
        ok = T.check(isinstance(cf["functionName"], str) and cf["functionName"] != "" and
                     isinstance(cf["url"], str) and isinstance(cf["scriptId"], str) and
                     cf["scriptId"].isdigit() and is_int(cf["lineNumber"]) and
                     is_int(cf["columnNumber"]), "%s: callFrame types %r" % (nt, cf)) and ok
        ok = T.check(is_int(n["selfSize"]) and n["selfSize"] >= 0, "%s: selfSize" % nt) and ok
        ok = T.check(is_int(n["id"]) and n["id"] > 0 and n["id"] not in ids, "%s: id" % nt) and ok
        ok = T.check(isinstance(n["children"], list), "%s: children" % nt) and ok
        if not ok:
            return None
        ids[n["id"]] = n
        # One scriptId per url; "0" and no position without one.
        if cf["url"] == "":
            T.check(cf["scriptId"] == "0" and cf["lineNumber"] == -1 and cf["columnNumber"] == -1,
                    "%s: no url, but script or position %r" % (nt, cf))
        else:
            T.check(cf["scriptId"] != "0" and cf["lineNumber"] >= 0,
                    "%s: url without a script or a line" % nt)
            T.check(scripts.setdefault(cf["scriptId"], cf["url"]) == cf["url"],
                    "%s: scriptId %s names two urls" % (nt, cf["scriptId"]))
        T.check(cf["lineNumber"] >= -1 and cf["columnNumber"] == (-1 if cf["lineNumber"] < 0 else 0),
                "%s: line/column %r/%r" % (nt, cf["lineNumber"], cf["columnNumber"]))
        kids = [json.dumps(c.get("callFrame"), sort_keys=True) for c in n["children"]
                if isinstance(c, dict)]
        T.check(len(kids) == len(set(kids)), "%s: siblings with the same callFrame" % nt)
    T.check(len(set(scripts.values())) == len(scripts), "%s: a url with two scriptIds" % tag)
    head = doc["head"]
    T.check(head["callFrame"] == ROOT and head["selfSize"] == 0, "%s: head %r" % (tag, head["callFrame"]))
    # No empty branches: every node other than the head holds something.
    totals = {}
    for n, _ in reversed(walk(head)):
        totals[n["id"]] = n["selfSize"] + sum(totals[c["id"]] for c in n["children"])
    T.check(all(totals[i] > 0 for i in ids if i != head["id"]), "%s: empty branches" % tag)
    return ids


def check_samples(tag, doc, ids):
    samples = doc["samples"]
    if not T.check(isinstance(samples, list), "%s: samples not a list" % tag):
        return
    sums = {}
    for k, s in enumerate(samples):
        if not T.check(isinstance(s, dict) and set(s) == {"size", "nodeId", "ordinal"},
                       "%s: sample %r" % (tag, s)):
            return
        T.check(is_int(s["size"]) and s["size"] > 0, "%s: sample size %r" % (tag, s))
        T.check(s["nodeId"] in ids, "%s: sample of unknown node %r" % (tag, s))
        T.check(s["ordinal"] == k + 1, "%s: ordinal %r at %d" % (tag, s["ordinal"], k))
        sums[s["nodeId"]] = sums.get(s["nodeId"], 0) + s["size"]
    for i, n in ids.items():
        T.check(sums.get(i, 0) == n["selfSize"], "%s: node %d selfSize %d, its samples %d"
                % (tag, i, n["selfSize"], sums.get(i, 0)))


# -- Expectations from the JSON export ------------------------------------------


def node_path(doc, i, script_of):
    """Node i's frames as callFrames (without scriptIds: script_of gives
    the one the file uses for a url), serialized."""
    names, meta = T.node_frames(doc, i), T.node_places(doc, i)
    assert len(names) == len(meta), (names, meta)
    out = []
    for name, (s, line) in zip(names, meta):
        url = T.clean(s["file"], False) if s is not None and T.has_file(s) else ""
        ln = (line - 1 if line > 0 else 0) if url else -1
        cf = {"functionName": T.clean(name, False), "scriptId": script_of(url), "url": url,
              "lineNumber": ln, "columnNumber": 0 if ln >= 0 else -1}
        out.append(json.dumps(cf, sort_keys=True))
    return tuple(out)


def check_figures(tag, doc, model, reader, fig):
    scripts = {"": "0"}
    for n, _ in walk(doc["head"]):
        scripts[n["callFrame"]["url"]] = n["callFrame"]["scriptId"]
    got, want = {}, {}
    for n, path in walk(doc["head"]):
        if n["selfSize"]:
            got[path] = got.get(path, 0) + n["selfSize"]
    for i, n in enumerate(model["nodes"]):
        if n["self"][fig]:
            p = node_path(model, i, lambda u: scripts.get(u, "?"))
            want[p] = want.get(p, 0) + n["self"][fig]
    total = sum(got.values())
    T.check(total == model["totals"][fig], "%s: selfSize adds up to %d, the %s total is %d"
            % (tag, total, fig, model["totals"][fig]))
    if reader is not None:
        T.check(total == reader[fig], "%s: selfSize adds up to %d, the independent reader's %s is %d"
                % (tag, total, fig, reader[fig]))
    diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
    T.check(not diff, "%s: %d paths differ from the JSON nodes, e.g. %r: got %r, want %r"
            % (tag, len(diff), diff[:1], got.get(diff[0]) if diff else 0,
               want.get(diff[0]) if diff else 0))
    return len(want)


def reader_figures(path):
    r = subprocess.run([sys.executable, TOTALS_PY, path], capture_output=True, text=True)
    return json.loads(r.stdout)


def main():
    sys.setrecursionlimit(20000)  # json.loads nests once per frame
    d = T.tmpdir()
    cases = T.corpus() + [T.write_hostile(d)]
    ran = sampled = 0
    for prof in cases:
        tag = os.path.relpath(prof, T.runfiles_root())
        reader = reader_figures(prof)
        out = os.path.join(d, "out.heapprofile")
        # The suffix picks the format; the decoder's totals are the reader's.
        if not T.convert_vs_reader(T.ljm_binary(), None, out, prof, tag, reader):
            continue
        model = T.load_json(prof, d)
        if not T.check(model is not None, "%s: no JSON export" % tag):
            continue
        sampled += bool(reader["sample_rate"])
        with open(out, "rb") as f:
            default = f.read()
        outputs = {}
        for value in KINDS:
            data = default if value is None else T.convert_ok(
                prof, os.path.join(d, "v.heapprofile"), "heapprofile", ["--value", value])
            vt = "%s [--value %s]" % (tag, value or "default")
            if not T.check(data is not None, "%s: failed" % vt):
                continue
            fig = KINDS[value]
            if fig in outputs:  # the same figure, the same bytes
                T.check(data == outputs[fig], "%s: differs from --value %s" % (vt, fig))
                continue
            outputs[fig] = data
            doc = parse(vt, data)
            ids = check_shape(vt, doc) if doc is not None else None
            if ids is None:
                continue
            check_samples(vt, doc, ids)
            check_figures(vt, doc, model, reader, fig)
        T.check(T.convert_ok(prof, "-", "heapprofile") == default, "%s: -o - differs" % tag)
        ran += 1
    T.check(sampled == 1, "%d sampled streams checked" % sampled)
    T.finish("heapprofile_test", ran)


main()
