#!/usr/bin/python3
"""JSON on the whole corpus: parsed back with Python's json, checked against
SCHEMA.md (keys and types), site figures summed against the totals, and
the hostile profile's names round-tripped; a sampled stream's rate and
estimates against the independent reader's; label sets and each node's
shares of them adding up; testdata/ext/labelled.ljm grouped by plugin
(`--group-by plugin`): its label roots hold the bytes worked out by hand."""
import json
import os
import re

import export_testlib as T

import ljmread  # an independent reader of the stream

FIGURES = ["alloc_count", "alloc_bytes", "free_count", "free_bytes",
           "inuse_count", "inuse_bytes", "peak_count", "peak_bytes"]
STREAM = {"path": str, "gzip": bool, "zstd": bool, "ljs_version": int, "ljm_version": int,
          "bytes": int, "truncated": bool, "trailing": int, "sample_rate": (int, type(None)),
          "snapshot": bool}
TEMP = "temp_count"  # a number where temporaries are counted (exact streams), else null
TOTALS = dict({f: int for f in FIGURES}, temp_count=(int, type(None)), events=int, allocs=int, reallocs=int,
              frees=int, peak_event=int, unattributed_frees=int)
SYMBOLS = {"protos": int, "cfuncs": int, "traces": int, "symtab_events": int}
SITE = dict({f: int for f in FIGURES}, temp_count=(int, type(None)), id=int, kind=str, name=str, func=str,
            file=str, chunk=str, line=int, func_line=int, addr=str,
            symbol_addr=str, traceno=int, func_from=(str, type(None)))


def figures_of(doc):
    """The figures to add up: temp_count too where it is counted."""
    return FIGURES + ([TEMP] if doc["totals"][TEMP] is not None else [])


def has_keys(tag, obj, spec):
    T.check(isinstance(obj, dict), "%s: not an object" % tag)
    for k, t in spec.items():
        v = obj.get(k)
        ok = isinstance(v, t) and (t is not int or not isinstance(v, bool))
        T.check(ok, "%s: %s should be %s, is %r" % (tag, k, getattr(t, "__name__", t), v))


def check_nodes(tag, doc):
    """The call tree: parents first, depths, kinds, self figures adding up to
    the totals, totals of each node = self + its children's totals; in a
    standard stream node i is site i alone."""
    nodes, sites, t = doc["nodes"], doc["sites"], doc["totals"]
    figs = figures_of(doc)
    stacks = doc["stream"]["stacks"]
    T.check(isinstance(stacks, bool) and isinstance(doc["stream"]["timed"], bool),
            "%s: stream.stacks/timed" % tag)
    want_total = {}
    for i, n in enumerate(nodes):
        T.check(n["id"] == i, "%s: node ids not dense at %d" % (tag, i))
        p = n["parent"]
        T.check(p is None or (isinstance(p, int) and 0 <= p < i), "%s: node %d parent %r" % (tag, i, p))
        T.check(n["depth"] == (1 if p is None else nodes[p]["depth"] + 1), "%s: node %d depth" % (tag, i))
        T.check(n["kind"] in ("frame", "resume", "tail", "cut"), "%s: node %d kind" % (tag, i))
        T.check((n["site"] is not None) == (n["kind"] == "frame") and
                (n["site"] is None or 0 <= n["site"] < len(sites)), "%s: node %d site" % (tag, i))
        if not stacks and doc["group_by"] is None:
            T.check(len(nodes) == len(sites) and n["site"] == i and p is None and
                    all(n["self"][f] == sites[i][f] for f in figs),
                    "%s: standard stream node %d is not site %d alone" % (tag, i, i))
        want_total[i] = dict(n["self"])
    for i in range(len(nodes) - 1, -1, -1):
        T.check(nodes[i]["total"] == want_total[i], "%s: node %d total" % (tag, i))
        p = nodes[i]["parent"]
        if p is not None:
            for f in figs:
                want_total[p][f] += want_total[i][f]
    for f in figs:
        total = sum(n["self"][f] for n in nodes)
        T.check(total == t[f], "%s: nodes' self sum %s to %d, totals say %d" % (tag, f, total, t[f]))
    for r in doc["rss"]:
        T.check(isinstance(r["bytes"], int), "%s: rss sample %r" % (tag, r))


LABEL_FIGURES = FIGURES[:6]


def check_labels(tag, doc):
    """Label sets: set 0 and the stream's, whose figures add up to the
    totals; each node's shares per set add up to the set's figures."""
    sets, t = doc["label_sets"], doc["totals"]
    T.check(isinstance(sets, list), "%s: label_sets %r" % (tag, sets))
    if not sets:
        T.check(all(n["labels"] == [] for n in doc["nodes"]), "%s: node labels without sets" % tag)
        return
    ids = [x["id"] for x in sets]
    T.check(ids[0] == 0 and ids == sorted(set(ids)) and sets[0]["labels"] == {},
            "%s: label set ids %r" % (tag, ids[:8]))
    label_figs = LABEL_FIGURES + ([TEMP] if t[TEMP] is not None else [])
    for f in label_figs:
        T.check(sum(x[f] for x in sets) == t[f], "%s: label sets sum %s to %d, totals say %d"
                % (tag, f, sum(x[f] for x in sets), t[f]))
    byid = {x["id"]: x for x in sets}
    share = {}
    for n in doc["nodes"]:
        for x in n["labels"]:
            T.check(x["set"] in byid and x["set"] != 0, "%s: node %d share of set %r" % (tag, n["id"], x["set"]))
            g = share.setdefault(x["set"], dict.fromkeys(label_figs, 0))
            for f in label_figs:
                g[f] += x[f]
    for i, x in byid.items():
        if i:
            want = {f: x[f] for f in label_figs}
            T.check(share.get(i, dict.fromkeys(label_figs, 0)) == want,
                    "%s: nodes' shares of set %d %r, the set says %r" % (tag, i, share.get(i), want))


# testdata/ext/labelled.ljm by plugin (its docstring's table): the label roots' totals
GROUPED = {"plugin=auth": (292, 128, 100), "plugin=(other)": (57, 57, 0),
           "plugin=json": (40, 40, 0), "plugin=(none)": (10, 10, 0)}


def check_grouped(d, prof):
    """`--group-by plugin`: the document passes check_doc, names the key, and
    its label roots hold each plugin's allocated, in use and freed bytes."""
    tag = "labelled.ljm --group-by plugin"
    data = T.convert_ok(prof, os.path.join(d, "grouped.json"), extra=["--group-by", "plugin"])
    doc = json.loads(data.decode("utf-8"))
    check_doc(tag, doc, prof)
    roots = {doc["sites"][n["site"]]["func"]: (n["total"]["alloc_bytes"], n["total"]["inuse_bytes"],
                                               n["total"]["free_bytes"])
             for n in doc["nodes"] if n["parent"] is None and n["site"] is not None and
             doc["sites"][n["site"]]["kind"] == "label"}
    T.check(doc["group_by"] == "plugin" and roots == GROUPED, "%s: roots %r, want %r"
            % (tag, roots, GROUPED))


def check_stacks_vs_reader(tag, doc, want):
    """Per stack of the stream: the allocations made under it and the live
    blocks it made, as the independent reader counts them, equal the self
    figures of the node with that stream id and of the charged sites' leaves
    under it (stack 0: the sites' own nodes together)."""
    got, nodes = {}, doc["nodes"]
    for n in nodes:
        # A charged site's leaf (stream_id 0 under a stream node) holds events
        # of its parent's stack.
        sid = n["stream_id"] or (nodes[n["parent"]]["stream_id"] if n["parent"] is not None else 0)
        key = str(sid)
        g = got.setdefault(key, [0, 0, 0, 0])
        for k, f in enumerate(("alloc_count", "alloc_bytes", "inuse_count", "inuse_bytes")):
            g[k] += n["self"][f]
    got = {k: v for k, v in got.items() if any(v)}

    def fits(g, w):  # a sampled stream's counts: [lo, hi] bounds
        return all(lo <= x <= hi for x, (lo, hi) in
                   zip(g, [v if isinstance(v, list) else (v, v) for v in w]))
    T.check(set(got) == set(want["by_stack"]) and
            all(fits(got[k], w) for k, w in want["by_stack"].items()),
            "%s: per-stack figures %r, the reader says %r"
            % (tag, sorted(got.items())[:4], sorted(want["by_stack"].items())[:4]))


def check_sampled(tag, doc, want):
    """A sampled stream: its rate, and totals that are the reader's
    estimates (counts within its bounds)."""
    T.check(want["sample_rate"] and doc["stream"]["sample_rate"] == want["sample_rate"],
            "%s: sample_rate %r, the reader says %r"
            % (tag, doc["stream"]["sample_rate"], want["sample_rate"]))
    for f in ("alloc_count", "alloc_bytes", "inuse_count", "inuse_bytes", "peak_count",
              "peak_bytes"):
        T.check(T.fig_ok(want, f, doc["totals"][f]), "%s: %s %d, the reader says %d %s"
                % (tag, f, doc["totals"][f], want[f], want.get("count_bounds", {}).get(f, "")))


def check_doc(tag, doc, prof):
    T.check(doc.get("format") == "ljmkit-json" and doc.get("version") == 2, "%s: header" % tag)
    T.check(set(doc) == {"format", "version", "stream", "totals", "symbols", "aliases", "sites",
                         "label_sets", "types", "group_by", "nodes", "rss"},
            "%s: top-level keys %s" % (tag, sorted(doc)))
    T.check(isinstance(doc.get("types"), list) and
            all(set(t) == {"type", "alloc_count", "alloc_bytes", "free_count", "free_bytes",
                           "inuse_count", "inuse_bytes", "temp_count"} for t in doc["types"]),
            "%s: types, each with its figures" % tag)
    has_keys(tag + " stream", doc["stream"], STREAM)
    T.check(doc["stream"]["path"] == prof, "%s: stream.path %r" % (tag, doc["stream"]["path"]))
    T.check(doc["stream"]["snapshot"] is False, "%s: a profile read as a snapshot" % tag)
    ta = doc["stream"].get("truncated_at", "missing")
    T.check(ta is None if not doc["stream"]["truncated"] else isinstance(ta, int),
            "%s: truncated_at %r" % (tag, ta))
    has_keys(tag + " totals", doc["totals"], TOTALS)
    has_keys(tag + " symbols", doc["symbols"], SYMBOLS)
    t = doc["totals"]
    T.check(t["events"] == t["allocs"] + t["reallocs"] + t["frees"], "%s: event counts" % tag)
    sites = doc["sites"]
    for i, s in enumerate(sites):
        has_keys("%s site %d" % (tag, i), s, SITE)
        T.check(s["id"] == i, "%s: site ids not dense at %d" % (tag, i))
        T.check(s["kind"] in ("internal", "lua", "c", "trace", "label"), "%s: kind %r" % (tag, s["kind"]))
        T.check((s["kind"] == "label") == (doc["group_by"] is not None and
                                            s["func"].startswith(doc["group_by"] + "=")),
                "%s: a label site %r, grouped by %r" % (tag, s["func"], doc["group_by"]))
        T.check((s["func_from"] in ("source", "main", "builtin", "anonymous", "unknown",
                                    "stream"))
                == (s["kind"] == "lua"), "%s: func_from %r of a %s site" % (tag, s["func_from"], s["kind"]))
        T.check(not re.search(r"0x[0-9a-f]{5,}", s["func"]), "%s: address in func %r" % (tag, s["func"]))
        T.check(s["addr"].startswith("0x") and s["symbol_addr"].startswith("0x"), "%s: addr" % tag)
        ts = s.get("trace_start", "missing")
        T.check(ts is None or (s["kind"] == "trace" and isinstance(ts, int) and 0 <= ts < len(sites)),
                "%s: trace_start %r of a %s site" % (tag, ts, s["kind"]))
        T.check(s["inuse_bytes"] <= s["alloc_bytes"] and s["inuse_count"] <= s["alloc_count"],
                "%s: site %d holds more than it allocated" % (tag, i))
    T.check((t[TEMP] is None) == (doc["stream"]["sample_rate"] is not None) and
            all((s[TEMP] is None) == (t[TEMP] is None) for s in sites) and
            all((n["self"][TEMP] is None) == (t[TEMP] is None) for n in doc["nodes"]),
            "%s: temp_count null in a %s stream" % (tag, "sampled" if t[TEMP] is None else "exact"))
    for f in figures_of(doc):
        total = sum(s[f] for s in sites)
        T.check(total == t[f], "%s: sites sum %s to %d, totals say %d" % (tag, f, total, t[f]))
    check_nodes(tag, doc)
    check_labels(tag, doc)
    for a in doc["aliases"]:
        T.check(a["name"].startswith("function_alias_") and isinstance(a["text"], str),
                "%s: alias %r" % (tag, a))


def check_hostile(doc, raw):
    chunk, cname = raw
    names = {s["name"] for s in doc["sites"]}
    # one U+FFFD per invalid byte, control characters kept (escaped in JSON)
    want_chunk = chunk.decode("utf-8", "surrogateescape")
    want_chunk = "".join("\ufffd" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in want_chunk)
    T.check(want_chunk + ":7" in names, "hostile: Lua name %r not in %r" % (want_chunk + ":7", names))
    want_c = cname.decode("utf-8", "surrogateescape")
    want_c = "".join("\ufffd" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in want_c)
    T.check(want_c + ":0x7000" in names, "hostile: C name missing from %r" % names)
    T.check(doc["totals"]["alloc_bytes"] == 100 + 50 + 7 + 33 + 64 + 12 + 9, "hostile: alloc_bytes")
    T.check(doc["totals"]["inuse_bytes"] == 100 + 7 + 33 + 64 + 12 + 9, "hostile: inuse_bytes")
    T.check(doc["aliases"] == [{"name": "function_alias_1", "text": "local x = 1\nreturn '<&>'"}],
            "hostile: aliases %r" % doc["aliases"])


def main():
    d = T.tmpdir()
    ran = 0
    sampled = False
    hostile = T.write_hostile(d)
    for prof in T.corpus() + [hostile]:
        tag = os.path.basename(prof)
        data = T.convert_ok(prof, os.path.join(d, "out.json"))
        if data is None:
            continue
        try:
            doc = json.loads(data.decode("utf-8", "strict"))
        except (UnicodeDecodeError, ValueError) as e:
            T.check(False, "%s: does not parse: %s" % (tag, e))
            continue
        check_doc(tag, doc, prof)
        if doc["stream"]["stacks"]:
            check_stacks_vs_reader(tag, doc, ljmread.load(prof))
        if tag == T.SAMPLED:
            check_sampled(tag, doc, ljmread.load(prof))
            sampled = True
        else:
            rate = doc["stream"].get("sample_rate", "missing")
            T.check(rate is None, "%s: sample_rate %r" % (tag, rate))
        if prof == hostile:
            check_hostile(doc, T.hostile_stream()[1])
        T.check(T.convert_ok(prof, "-", "json") == data, "%s: stdout differs from file" % tag)
        ran += 1
    T.check(sampled, "%s not checked" % T.SAMPLED)
    check_grouped(d, next(p for p in T.corpus() if os.path.basename(p) == "labelled.ljm"))
    ran += 1
    T.finish("json_test", ran)


main()
