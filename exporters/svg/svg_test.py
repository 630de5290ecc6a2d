#!/usr/bin/python3
"""SVG flame graphs on the whole corpus: xmllint --noout, self-contained,
frame widths adding up (a parent's value is its own plus its children's,
the root's is the total), pixels matching the exact values, the frame
paths equal to the folded export's, and a hostile profile's names; a
sampled stream's subtitle: the independent reader's estimate and the
estimates' sentence."""
import os
import re
import subprocess
import xml.etree.ElementTree as ET

import export_testlib as T

SVG = "{http://www.w3.org/2000/svg}"
LJM = "{urn:ljmkit:flamegraph}"
XPAD, WIDTH = 10, 1200
MIN_WIDTH = 0.1  # frames narrower than this are drawn in their callers (svg.c)
TITLE = re.compile(r"^(.*) \(([0-9,]+) (bytes|allocations|objects), ([0-9]+\.[0-9]{2})%\)$", re.S)


def frames_of(tag, root):
    g = root.find(".//%sg[@id='frames']" % SVG)
    if not T.check(g is not None, "%s: no frames group" % tag):
        return []
    out = []
    for f in g.findall(SVG + "g"):
        title = f.find(SVG + "title").text or ""
        m = TITLE.match(title)
        if not T.check(m is not None, "%s: bad title %r" % (tag, title)):
            continue
        rect = f.find(SVG + "rect")
        out.append({"name": m.group(1), "shown": int(m.group(2).replace(",", "")),
                    "pct": float(m.group(4)), "x": int(f.get(LJM + "x")),
                    "v": int(f.get(LJM + "v")), "depth": int(f.get(LJM + "depth")),
                    "cls": f.get("class"), "rx": float(rect.get("x")),
                    "rw": float(rect.get("width")),
                    "label": f.find(SVG + "text").text or ""})
    return out


def check_tree(tag, frames, total):
    """Returns {folded path: self value} rebuilt from the geometry."""
    if not T.check(frames and frames[0]["depth"] == 0 and frames[0]["name"] == "all",
                   "%s: first frame is not the root" % tag):
        return {}
    T.check(frames[0]["v"] == total, "%s: root %d != total %d" % (tag, frames[0]["v"], total))
    scale = (WIDTH - 2 * XPAD) / total if total else 0
    paths, stack, selfs = {}, [], {}
    for i, f in enumerate(frames):
        T.check(f["v"] == f["shown"], "%s: title value differs from ljm:v" % tag)
        T.check(f["cls"] in ("lua", "c", "jit", "internal"), "%s: class %r" % (tag, f["cls"]))
        pct = 100.0 * f["v"] / total if total else 100.0
        T.check(abs(pct - f["pct"]) <= 0.006, "%s: percent %s vs %.4f" % (tag, f["pct"], pct))
        if i:
            T.check(f["v"] > 0, "%s: zero-width frame %r" % (tag, f["name"]))
            T.check(abs(f["rx"] - (XPAD + f["x"] * scale)) < 0.011 and
                    abs(f["rw"] - f["v"] * scale) < 0.011, "%s: pixels of %r" % (tag, f["name"]))
        lab = f["label"]
        T.check(lab == "" or lab == f["name"] or (lab.endswith("..") and f["name"].startswith(lab[:-2])),
                "%s: label %r for %r" % (tag, lab, f["name"]))
        del stack[f["depth"]:]
        T.check(len(stack) == f["depth"], "%s: depth jumps at %r" % (tag, f["name"]))
        if stack:
            p = stack[-1]
            T.check(p["x"] <= f["x"] and f["x"] + f["v"] <= p["x"] + p["v"],
                    "%s: %r sticks out of its parent" % (tag, f["name"]))
        f["kids"] = 0
        if stack:
            p = stack[-1]
            stack[-1]["kids"] += f["v"]
            # Siblings too narrow to draw may sit between: in order, no overlap.
            T.check(f["x"] >= p.get("next", p["x"]), "%s: %r overlaps its siblings" % (tag, f["name"]))
            p["next"] = f["x"] + f["v"]
        stack.append(f)
        f["path"] = [s["name"] for s in stack[1:]]
    for f in frames:
        self_v = f["v"] - f["kids"]
        T.check(self_v >= 0, "%s: children of %r exceed it" % (tag, f["name"]))
        if self_v and f["depth"]:
            k = T.folded_stack(f["path"])
            selfs[k] = selfs.get(k, 0) + self_v
    T.check(sum(selfs.values()) + (frames[0]["v"] - frames[0]["kids"]) == total,
            "%s: self values do not add up" % tag)
    return selfs


def min_value(total):
    """The smallest value svg.c draws: MIN_WIDTH pixels at least."""
    scale = (WIDTH - 2 * XPAD) / total if total else 0
    if not scale:
        return 0
    v = int(MIN_WIDTH / scale)
    while v * scale < MIN_WIDTH:
        v += 1
    return v


def cut_folded(folded, total):
    """The folded paths as the graph draws them: a frame worth less than
    min_value merged into its caller. Returns (paths, frames left out, value
    of the outermost of them)."""
    minv = min_value(total)
    totals = {}
    for path, v in folded.items():
        fr = path.split(";")
        for k in range(1, len(fr) + 1):
            totals[tuple(fr[:k])] = totals.get(tuple(fr[:k]), 0) + v
    hidden = sum(1 for v in totals.values() if v < minv)
    hidden_v = sum(v for k, v in totals.items() if v < minv and (len(k) == 1 or totals[k[:-1]] >= minv))
    out = {}
    for path, v in folded.items():
        fr = path.split(";")
        k = len(fr)
        while k and totals[tuple(fr[:k])] < minv:
            k -= 1
        if k:
            key = ";".join(fr[:k])
            out[key] = out.get(key, 0) + v
    return out, hidden, hidden_v


def folded_of(prof, d, kind):
    data = T.convert_ok(prof, os.path.join(d, "x.folded"), None, ["--value", kind])
    out = {}
    if not T.check(data is not None, "%s: folded export failed" % prof):
        return out
    for ln in data.decode("utf-8").splitlines():
        s, c = ln.rsplit(" ", 1)
        out[s] = int(c)
    return out


def check_subtitle(tag, root, kind, reader, cut):
    """The subtitle's total, the frames too narrow to draw (cut: their count
    and value) and, for a sampled stream (reader: its figures), the reader's
    estimate and the sentence after it."""
    sub = root.find(".//%stext[@id='subtitle']" % SVG)
    text = "".join(sub.itertext()) if sub is not None else ""
    m = re.search(r": ([0-9,]+) [a-z]+ in total(.*)$", text)
    if not T.check(m is not None, "%s: subtitle %r" % (tag, text)):
        return
    want = ""
    if cut[0]:
        want = "; %s frames narrower than 0.1 px (%s %s) drawn in their callers" % (
            "{:,}".format(cut[0]), "{:,}".format(cut[1]), root.get(LJM + "unit"))
    T.check(m.group(2).endswith(want), "%s: subtitle %r, want it to end %r" % (tag, text, want))
    m = re.search(r": ([0-9,]+) [a-z]+ in total(.*)$", text[:len(text) - len(want)])
    if reader is None:
        T.check(m.group(2) == "", "%s: subtitle %r after the total" % (tag, text))
        return
    T.check(T.fig_ok(reader, kind, int(m.group(1).replace(",", ""))) and
            m.group(2) == " (%s)" % T.sampled_note(reader["sample_rate"]),
            "%s: subtitle %r, the reader's estimate %d %s" % (tag, text, reader[kind],
                                                             reader.get("count_bounds", "")))


def check_svg(tag, path, prof, d, kind, total, reader=None):
    p = subprocess.run(["xmllint", "--noout", "--nonet", path], stderr=subprocess.PIPE)
    T.check(p.returncode == 0, "%s: xmllint: %s" % (tag, p.stderr.decode("utf-8", "replace")[:500]))
    raw = open(path, "rb").read()
    T.check(b"href" not in raw and b"<image" not in raw and b"@import" not in raw,
            "%s: refers to something outside the file" % tag)
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as e:
        T.check(False, "%s: not well-formed: %s" % (tag, e))
        return
    T.check(root.tag == SVG + "svg" and root.get(LJM + "total") == str(total),
            "%s: root element or ljm:total" % tag)
    T.check(root.find(SVG + "script") is not None and root.find(SVG + "style") is not None,
            "%s: script or style missing" % tag)
    T.check(kind in "".join(root.find(SVG + "text").itertext()), "%s: title lacks %s" % (tag, kind))
    want, hidden, hidden_v = cut_folded(folded_of(prof, d, kind), total)
    check_subtitle(tag, root, kind, reader, (hidden, hidden_v))
    selfs = check_tree(tag, frames_of(tag, root), total)
    T.check(selfs == want, "%s: frame paths differ from the folded export (frames narrower "
            "than %s px in their callers)" % (tag, MIN_WIDTH))


def main():
    d = T.tmpdir()
    ran = 0
    hostile = T.write_hostile(d)
    sampled = 0
    for prof in T.corpus() + [hostile]:
        model = T.load_json(prof, d)
        reader = T.reader_figures(prof) if os.path.basename(prof) == T.SAMPLED else None
        for kind in ("alloc_bytes", "inuse_count"):
            tag = "%s [%s]" % (os.path.basename(prof), kind)
            out = os.path.join(d, "out.svg")
            data = T.convert_ok(prof, out, None, ["--value", kind])
            if data is None:
                continue
            if not T.check(model is not None, "%s: json failed where svg worked" % tag):
                continue
            check_svg(tag, out, prof, d, kind, model["totals"][kind], reader)
            sampled += reader is not None
            ran += 1
    T.check(sampled == 2, "%s: checked %d times" % (T.SAMPLED, sampled))
    T.finish("svg_test", ran)


main()
