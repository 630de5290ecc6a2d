#!/usr/bin/python3
"""`ljm convert -f speedscope` on the whole corpus.

For every testdata .ljm file and the hostile-names stream of export_testlib:
  * tests/lib/ljmread.py (an independent reader) says whether the
    stream is valid: an invalid one must fail, a valid one must convert, and
    the decoder's totals (JSON export) must equal the reader's;
  * the file is strict JSON in valid UTF-8 and follows speedscope's file
    format schema (https://www.speedscope.app/file-format-schema.json: the
    fields, their types and enums, restated here) plus what speedscope's
    importer needs: samples and weights of equal length, positive weights,
    frame indices in range, events in time order and properly nested;
  * one sampled profile per figure (alloc_bytes, alloc_count, inuse_bytes,
    inuse_count, peak_bytes) with its unit, named with the order of its
    samples (time order with time marks, else event order); the weights add
    up to the JSON export's totals and to the independent reader's figures
    (a sampled stream's estimates, its counts within their bounds), and the
    file's name says when they are estimates;
  * per stack, the weights equal the self figures of the JSON export's
    call-tree nodes, frame for frame: names as frames.h gives them, file and
    line from the JSON sites;
  * samples come in stream order: consecutive samples differ in stack, and
    in a timed stream their nodes' times never go back; a timed stream has
    the evented time profile, in microseconds, each stack inside its nodes'
    time span; for testdata/ext/stacked.ljm the exact sequence of stacks and
    their times;
  * --value picks activeProfileIndex and changes nothing else; the suffix
    .speedscope.json selects the format; `-o -` writes the same bytes.
The same on random streams (a fixed seed): blocks freed, moved and
overwritten on few addresses, stacks and time marks with gaps. And on a
built stream of several slices (16384 events each), the exact samples of
every figure: per slice, each stack once in the order it first allocates.
"""
import json
import os
import random
import subprocess
import sys

import export_testlib as T

SCHEMA_URL = "https://www.speedscope.app/file-format-schema.json"
UNITS = {"bytes", "microseconds", "milliseconds", "nanoseconds", "none", "seconds"}
FIGS = [("alloc_bytes", "bytes"), ("alloc_count", "none"), ("inuse_bytes", "bytes"),
        ("inuse_count", "none"), ("peak_bytes", "bytes")]
MARK_SPAN_US = 10000  # decoder/EXTENSION.md: events come < 10 ms after their mark
RANDOM_STREAMS = 24
TOTALS_PY = T.READER_PY


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return (is_int(v) or isinstance(v, float)) and v == v


def no_constants(name):
    raise ValueError("non-standard JSON constant %s" % name)


def parse(tag, data):
    try:
        return json.loads(data.decode("utf-8", "strict"), parse_constant=no_constants)
    except (UnicodeDecodeError, ValueError) as e:
        T.check(False, "%s: not strict JSON in UTF-8: %s" % (tag, e))
        return None


# -- Schema ------------------------------------------------------------------


def check_keys(tag, obj, required, optional=()):
    if not T.check(isinstance(obj, dict), "%s: not an object" % tag):
        return False
    keys = set(obj)
    ok = T.check(set(required) <= keys, "%s: missing %s" % (tag, sorted(set(required) - keys)))
    return T.check(keys <= set(required) | set(optional),
                   "%s: unknown keys %s" % (tag, sorted(keys - set(required) - set(optional)))) and ok


def check_schema(tag, doc):
    """The file format schema's rules and the importer's; True when usable."""
    if not check_keys(tag, doc, ["$schema", "profiles", "shared"],
                      ["name", "activeProfileIndex", "exporter"]):
        return False
    T.check(doc["$schema"] == SCHEMA_URL, "%s: $schema %r" % (tag, doc["$schema"]))
    T.check(isinstance(doc.get("name", ""), str), "%s: name" % tag)
    T.check(isinstance(doc.get("exporter", ""), str), "%s: exporter" % tag)
    profiles = doc["profiles"]
    if not T.check(isinstance(profiles, list) and profiles, "%s: no profiles" % tag):
        return False
    T.check(is_int(doc.get("activeProfileIndex", 0)) and
            0 <= doc.get("activeProfileIndex", 0) < len(profiles),
            "%s: activeProfileIndex %r" % (tag, doc.get("activeProfileIndex")))
    if not check_keys(tag + " shared", doc["shared"], ["frames"]):
        return False
    frames = doc["shared"]["frames"]
    if not T.check(isinstance(frames, list), "%s: frames not a list" % tag):
        return False
    seen = set()
    for i, f in enumerate(frames):
        ft = "%s frame %d" % (tag, i)
        if not check_keys(ft, f, ["name"], ["file", "line", "col"]):
            return False
        T.check(isinstance(f["name"], str) and f["name"] != "", "%s: name %r" % (ft, f["name"]))
        T.check(isinstance(f.get("file", "x"), str) and f.get("file", "x") != "", "%s: file" % ft)
        T.check(is_int(f.get("line", 1)) and f.get("line", 1) >= 1, "%s: line %r" % (ft, f.get("line")))
        T.check("col" not in f, "%s: col (Lua has no columns)" % ft)
        key = (f["name"], f.get("file"), f.get("line"))
        T.check(key not in seen, "%s: duplicate frame %r" % (ft, key))
        seen.add(key)
    ok = True
    for k, p in enumerate(profiles):
        pt = "%s profile %d" % (tag, k)
        if not T.check(isinstance(p, dict) and p.get("type") in ("sampled", "evented"),
                       "%s: type %r" % (pt, p.get("type") if isinstance(p, dict) else p)):
            ok = False
            continue
        common = ["type", "name", "unit", "startValue", "endValue"]
        if p["type"] == "sampled":
            ok = check_keys(pt, p, common + ["samples", "weights"]) and ok
        else:
            ok = check_keys(pt, p, common + ["events"]) and ok
        if not ok:
            continue
        T.check(isinstance(p["name"], str) and p["name"], "%s: name" % pt)
        T.check(p["unit"] in UNITS, "%s: unit %r" % (pt, p["unit"]))
        T.check(is_num(p["startValue"]) and is_num(p["endValue"]) and
                p["startValue"] <= p["endValue"], "%s: start/end values" % pt)
        if p["type"] == "sampled":
            ok = check_sampled(pt, p, len(frames)) and ok
        else:
            ok = check_evented(pt, p, len(frames)) and ok
    return ok


def check_sampled(pt, p, nframes):
    s, w = p["samples"], p["weights"]
    if not T.check(isinstance(s, list) and isinstance(w, list) and len(s) == len(w),
                   "%s: samples and weights differ in length" % pt):
        return False
    for st in s:
        if not T.check(isinstance(st, list) and st and
                       all(is_int(i) and 0 <= i < nframes for i in st),
                       "%s: bad stack %r" % (pt, st)):
            return False
    T.check(all(is_int(x) and x > 0 for x in w), "%s: weights not positive integers" % pt)
    T.check(p["startValue"] == 0 and p["endValue"] == sum(w),
            "%s: values %r..%r, weights sum to %d" % (pt, p["startValue"], p["endValue"], sum(w)))
    T.check(all(s[i] != s[i + 1] for i in range(len(s) - 1)),
            "%s: consecutive samples with the same stack (not merged)" % pt)
    return True


def check_evented(pt, p, nframes):
    """speedscope's evented rules: 'at' never goes back, a close names the
    innermost open frame, nothing is left open."""
    open_, last = [], p["startValue"]
    for e in p["events"]:
        if not check_keys(pt + " event", e, ["type", "frame", "at"]):
            return False
        if not T.check(e["type"] in ("O", "C") and is_int(e["frame"]) and
                       0 <= e["frame"] < nframes and is_num(e["at"]), "%s: bad event %r" % (pt, e)):
            return False
        T.check(e["at"] >= last, "%s: time goes back at %r" % (pt, e))
        last = e["at"]
        if e["type"] == "O":
            open_.append(e["frame"])
        elif T.check(open_ and open_[-1] == e["frame"], "%s: close of %r not innermost" % (pt, e)):
            open_.pop()
    T.check(not open_, "%s: frames left open" % pt)
    T.check(last <= p["endValue"], "%s: events after endValue" % pt)
    return True


# -- Expectations from the JSON export ---------------------------------------


def frame_obj(name, site, line):
    o = {"name": T.clean(name, False)}
    if site is not None and T.has_file(site):
        o["file"] = T.clean(site["file"], False)
        if line > 0:
            o["line"] = line
    return o


def node_stack(doc, i):
    """The frames of node i as speedscope frame objects (a hashable key)."""
    names = T.node_frames(doc, i)
    meta = T.node_places(doc, i)
    assert len(names) == len(meta), (names, meta)
    return tuple(json.dumps(frame_obj(nm, s, ln), sort_keys=True) for nm, (s, ln) in zip(names, meta))


def stack_key(frames, st):
    return tuple(json.dumps(frames[i], sort_keys=True) for i in st)


def check_figures(tag, doc, model, reader):
    timed = model["stream"]["timed"]
    profiles, frames = doc["profiles"], doc["shared"]["frames"]
    # temporary allocations: a profile where ljm counts them (exact streams)
    figs = FIGS + ([("temp_count", "none")] if model["totals"]["temp_count"] is not None else [])
    want_n = len(figs) + (1 if timed else 0)
    if not T.check(len(profiles) == want_n, "%s: %d profiles, expected %d" % (tag, len(profiles), want_n)):
        return
    order = "in time order" if timed else "in event order"
    node_stacks = [node_stack(model, i) for i in range(len(model["nodes"]))]
    for (fig, unit), p in zip(figs, profiles):
        pt = "%s [%s]" % (tag, fig)
        rfig = "temporary" if fig == "temp_count" else fig  # the reader's name
        T.check(p["type"] == "sampled" and p["name"].startswith(fig + ": ") and
                p["name"].endswith(", " + order),
                "%s: profile %r, expected %s ... %s" % (pt, p["name"], fig, order))
        T.check(p["unit"] == unit, "%s: unit %r" % (pt, p["unit"]))
        total = sum(p["weights"])
        T.check(total == model["totals"][fig], "%s: weights add up to %d, totals say %d"
                % (pt, total, model["totals"][fig]))
        if reader is not None:
            T.check(T.fig_ok(reader, rfig, total), "%s: weights add up to %d, the independent "
                    "reader says %d %s" % (pt, total, reader[rfig], reader.get("count_bounds", "")))
        got, want = {}, {}
        for st, w in zip(p["samples"], p["weights"]):
            k = stack_key(frames, st)
            got[k] = got.get(k, 0) + w
        for i, n in enumerate(model["nodes"]):
            if n["self"][fig]:
                want[node_stacks[i]] = want.get(node_stacks[i], 0) + n["self"][fig]
        diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        T.check(not diff, "%s: %d stacks differ from the JSON nodes, e.g. %r: got %r, want %r"
                % (pt, len(diff), diff[:1], got.get(diff[0]) if diff else 0,
                   want.get(diff[0]) if diff else 0))
    if timed:
        check_time_order(tag, doc, model, node_stacks)
        check_timeline(tag, doc, model, node_stacks)
    if os.path.basename(tag) == "stacked.ljm":
        check_stacked(tag, doc, model, node_stacks)


def spans_by_stack(model, node_stacks):
    """{stack: [(first_us, last_us), ...]} of the nodes with events."""
    out = {}
    for i, n in enumerate(model["nodes"]):
        if n["first_us"] is not None:
            out.setdefault(node_stacks[i], []).append((n["first_us"], n["last_us"]))
    return out


def check_time_order(tag, doc, model, node_stacks):
    """Every sampled profile: a time can be picked for each sample, inside
    the span of a node with its stack, that never goes back."""
    spans = spans_by_stack(model, node_stacks)
    frames = doc["shared"]["frames"]
    for (fig, _), p in zip(FIGS, doc["profiles"]):
        t = 0
        for st in p["samples"]:
            k = stack_key(frames, st)
            fits = [max(t, a) for a, b in spans.get(k, []) if b >= t]
            if not T.check(fits, "%s [%s]: sample %r out of time order (at %d us)" % (tag, fig, k, t)):
                break
            t = min(fits)


def timeline_intervals(doc, p):
    """(start, end, stack) of each stretch with frames open, width > 0."""
    frames = doc["shared"]["frames"]
    out, open_, since = [], [], None
    for e in p["events"]:
        if open_ and e["at"] > since:
            out.append((since, e["at"], stack_key(frames, open_)))
        since = e["at"]
        if e["type"] == "O":
            open_.append(e["frame"])
        else:
            open_.pop()
    return out


def check_timeline(tag, doc, model, node_stacks):
    p = doc["profiles"][-1]
    pt = tag + " [time]"
    T.check(p["type"] == "evented" and p["unit"] == "microseconds" and p["name"].startswith("time: "),
            "%s: %r %r %r" % (pt, p["type"], p["unit"], p["name"]))
    T.check(p["startValue"] == 0 and p["endValue"] >= (model["stream"]["duration_us"] or 0),
            "%s: values %r..%r" % (pt, p["startValue"], p["endValue"]))
    spans = spans_by_stack(model, node_stacks)
    leaves = set()
    for a, b, k in timeline_intervals(doc, p):
        # Only whole stacks of allocating nodes are open with a width (a
        # prefix is open only between a close and an open at one time).
        T.check(k in spans, "%s: %r open from %r to %r is no node's stack" % (pt, k, a, b))
        T.check(any(f <= a and b <= l + MARK_SPAN_US for f, l in spans.get(k, [])),
                "%s: %r open %r..%r, outside its nodes' times %r" % (pt, k, a, b, spans.get(k)))
        leaves.add(k)
    # Allocating stacks only; every one of them unless its runs are shorter
    # than the 1 us grid (the events of a mark spread over the time to the
    # next one): all of them where the marks leave 10 us per event.
    alloc = {stack_key(doc["shared"]["frames"], s) for s in doc["profiles"][1]["samples"]}
    T.check(leaves <= alloc and (leaves or not alloc),
            "%s: stacks on the time axis %d, allocating stacks %d" % (pt, len(leaves), len(alloc)))
    if model["totals"]["alloc_count"] * 10 <= (model["stream"]["duration_us"] or 0) and \
            not tag.startswith(os.path.join(os.path.dirname(tag), "random-")):
        T.check(leaves == alloc, "%s: allocating stacks missing on the time axis: %r"
                % (pt, sorted(alloc - leaves)[:3]))


def check_stacked(tag, doc, model, node_stacks):
    """stacked.ljm: each node's events are consecutive, so the samples are
    the allocating nodes by (first time, id), and the time axis is what the
    marks give (README: spread evenly after each mark, at most 10 ms)."""
    nodes = [(n["first_us"], i) for i, n in enumerate(model["nodes"]) if n["self"]["alloc_count"]]
    nodes.sort()
    p = doc["profiles"][1]  # alloc_count
    got = [(stack_key(doc["shared"]["frames"], s), w) for s, w in zip(p["samples"], p["weights"])]
    want = [(node_stacks[i], model["nodes"][i]["self"]["alloc_count"]) for _, i in nodes]
    T.check(got == want, "%s: samples not in stream order:\n  got  %r\n  want %r" % (tag, got, want))
    # The time axis: the nodes of one mark share [mark, next mark or end).
    marks = sorted({t for t, _ in nodes})
    end = model["stream"]["duration_us"]
    want_iv = []
    for j, mark in enumerate(marks):
        group = [i for t, i in nodes if t == mark]
        nxt = marks[j + 1] if j + 1 < len(marks) else end
        span = min(nxt - mark if nxt > mark else MARK_SPAN_US, MARK_SPAN_US)
        total = sum(model["nodes"][i]["self"]["alloc_count"] for i in group)
        k = 0
        for i in group:
            a = mark + span * k / total
            k += model["nodes"][i]["self"]["alloc_count"]
            want_iv.append((round(a, 3), round(mark + span * k / total, 3), node_stacks[i]))
    got_iv = [(round(a, 3), round(b, 3), k) for a, b, k in timeline_intervals(doc, doc["profiles"][-1])]
    T.check(got_iv == want_iv, "%s: time axis\n  got  %r\n  want %r" % (tag, got_iv, want_iv))


# -- Driver -----------------------------------------------------------------


def random_stream(rng, ext):
    """A stream of random events over few addresses (blocks freed, moved,
    overwritten, freed twice, unknown), standard or extended with stacks
    and time marks: the live-block and peak bookkeeping, and the time axis
    with its gaps, on many more cases than the corpus has."""
    s = T.Stream(flags=3 if ext else 0)
    protos = [0x1000 * (i + 1) for i in range(4)]
    for i, p in enumerate(protos):
        s.proto(p, b"@r%d.lua" % i, i * 10)
    s.cfunc(0x9000, b"cf")
    locs = [("lua", (protos[0], 3)), ("lua", (protos[1], 7)), ("lua", (protos[2], 9)),
            ("c", 0x9000), ("int", None)]
    nodes, t, pool = [], 0, rng.choice([20, 200, 5000])  # 5000: the table grows
    if ext:
        s.time(0)
        for _ in range(rng.randint(1, 15)):
            k = rng.random()
            frame = (("lua", rng.choice(protos), rng.randint(1, 40)) if k < 0.7 else
                     ("c", 0x9000) if k < 0.8 else ("resume",) if k < 0.9 else ("tail",))
            nodes.append(s.node(rng.choice([0] + nodes), frame))
    for _ in range(rng.randint(1, 3000)):
        if ext and rng.random() < 0.05:
            s.stack(rng.choice([0] + nodes))
        if ext and rng.random() < 0.02:
            t += rng.choice([0, 1, 700, 9000, 30000])
            s.time(t)
        src, loc = rng.choice(locs)
        addr = rng.randrange(0, pool) * 16
        r = rng.random()
        if r < 0.55:
            s.alloc(src, loc, addr, rng.randint(0, 900))
        elif r < 0.8:
            s.free(src, loc, addr, rng.randint(0, 900))
        else:
            s.realloc(src, loc, addr, rng.randint(0, 900), rng.randrange(0, pool) * 16,
                      rng.randint(0, 900))
    if ext and rng.random() < 0.5:
        s.time(t + rng.randint(0, 20000))
    return s.data()


SLICE_EVENTS = 16384  # speedscope.c: events per slice of the stream
SLICED_N = 40000     # events of the sliced stream: three slices


def sliced_stream():
    """A standard stream of 48,192 events, so several slices: three sites
    told apart by their sizes (A 16, B 32, C 48 bytes), A and B alternating,
    a stretch of C, A and B again, then the B blocks of the first slice
    freed. Returns the stream and its allocations as (event index, site)."""
    s = T.Stream()
    s.proto(0x1000, b"@a.lua", 1)
    s.proto(0x2000, b"@b.lua", 1)
    s.cfunc(0x9000, b"cf")
    where = {"A": ("lua", (0x1000, 3)), "B": ("lua", (0x2000, 7)), "C": ("c", 0x9000)}
    size = {"A": 16, "B": 32, "C": 48}
    allocs = []
    for i in range(SLICED_N):
        site = ("A" if i % 2 == 0 else "B") if i < 24000 else "C" if i < 28000 else \
            ("A" if i % 3 else "B")
        s.alloc(where[site][0], where[site][1], 0x100000 + 64 * i, size[site])
        allocs.append((i, site))
    freed = [i for i, site in allocs if site == "B" and i < SLICE_EVENTS]
    for i in freed:
        s.free("int", None, 0x100000 + 64 * i, 32)
    return s.data(), allocs, set(freed), size


def expected_samples(allocs, keep):
    """Slice by slice, each site once in the order it first allocates there,
    with the count of its allocations that 'keep' accepts; sites without any
    left out; the same site side by side is one sample."""
    out = []
    for start in range(0, SLICED_N, SLICE_EVENTS):
        counts = {}
        for i, site in allocs[start:start + SLICE_EVENTS]:
            counts[site] = counts.get(site, 0) + (1 if keep(i) else 0)
        for site, n in counts.items():
            if not n:
                continue
            if out and out[-1][0] == site:
                out[-1] = (site, out[-1][1] + n)
            else:
                out.append((site, n))
    return out


def check_slices(d):
    data, allocs, freed, size = sliced_stream()
    path = os.path.join(d, "sliced.ljm")
    with open(path, "wb") as f:
        f.write(data)
    out = T.convert_ok(path, os.path.join(d, "sliced.speedscope.json"), "speedscope")
    doc = parse("sliced", out) if out is not None else None
    if not T.check(doc is not None and check_schema("sliced", doc), "sliced: no usable file"):
        return
    by_size = {v: k for k, v in size.items()}
    prof = {p["name"].split(":")[0]: p for p in doc["profiles"]}

    def got(count_fig, bytes_fig):
        c, b = prof[count_fig], prof[bytes_fig]
        if not T.check(len(c["weights"]) == len(b["weights"]),
                       "sliced: %s and %s differ in samples" % (count_fig, bytes_fig)):
            return None
        return [(by_size.get(bw // cw, "?"), cw) for cw, bw in zip(c["weights"], b["weights"])]

    want = expected_samples(allocs, lambda i: True)
    have = got("alloc_count", "alloc_bytes")
    T.check(have == want, "sliced: allocations\n  got  %r\n  want %r" % (have, want))
    want = expected_samples(allocs, lambda i: i not in freed)
    have = got("inuse_count", "inuse_bytes")
    T.check(have == want, "sliced: live at the end\n  got  %r\n  want %r" % (have, want))
    # The peak is just before the frees: every block is live then.
    peak = prof["peak_bytes"]["weights"]
    want = [n * size[site] for site, n in expected_samples(allocs, lambda i: True)]
    T.check(peak == want, "sliced: live at the peak\n  got  %r\n  want %r" % (peak, want))


def reader_figures(path):
    r = subprocess.run([sys.executable, TOTALS_PY, path], capture_output=True, text=True)
    return json.loads(r.stdout)


def main():
    d = T.tmpdir()
    cases = T.corpus() + [T.write_hostile(d)]
    rng = random.Random(20240611)
    for i in range(RANDOM_STREAMS):
        path = os.path.join(d, "random-%02d.ljm" % i)
        with open(path, "wb") as f:
            f.write(random_stream(rng, i % 3 != 0))
        cases.append(path)
    ran = sampled = 0
    for prof in cases:
        tag = os.path.relpath(prof, T.runfiles_root())
        reader = reader_figures(prof)
        out = os.path.join(d, "out.speedscope.json")
        # The suffix picks the format; the decoder's totals are the reader's.
        if not T.convert_vs_reader(T.ljm_binary(), None, out, prof, tag, reader):
            continue
        with open(out, "rb") as f:
            data = f.read()
        model = T.load_json(prof, d)
        if not T.check(model is not None, "%s: no JSON export" % tag):
            continue
        doc = parse(tag, data)
        if doc is None or not check_schema(tag, doc):
            continue
        T.check(doc["activeProfileIndex"] == 0, "%s: opens on profile %r" % (tag, doc["activeProfileIndex"]))
        note = T.sampled_note(reader["sample_rate"])
        T.check(doc["name"].endswith(" (%s)" % note) if note else "sampled recording" not in doc["name"],
                "%s: name %r, sample_rate %r" % (tag, doc["name"], reader["sample_rate"]))
        sampled += bool(note)
        check_figures(tag, doc, model, reader)
        for i, kind in enumerate(T.VALUE_KINDS):
            other = T.convert_ok(prof, os.path.join(d, "v.json"), "speedscope", ["--value", kind])
            o = parse(tag, other) if other is not None else None
            if T.check(o is not None, "%s --value %s: failed" % (tag, kind)):
                T.check(o.pop("activeProfileIndex") == i, "%s --value %s: active profile" % (tag, kind))
                o["activeProfileIndex"] = 0
                T.check(o == doc, "%s --value %s: more than the active profile changed" % (tag, kind))
        stdout = T.convert_ok(prof, "-", "speedscope")
        T.check(stdout == data, "%s: -o - differs from the file" % tag)
        ran += 1
    check_slices(d)
    T.check(sampled == 1, "%d sampled streams checked" % sampled)
    T.finish("speedscope_test", ran + 1)


main()
