#!/usr/bin/python3
"""Runs the SVG's embedded script (node, fake DOM: svg_dom_harness.js) on
real exports and checks click-to-zoom, Reset Zoom, hover details and
search against values computed here from the frames' exact ljm:x/ljm:v."""
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import export_testlib as T

LJM = "{urn:ljmkit:flamegraph}"
SVG = "{http://www.w3.org/2000/svg}"
HARNESS = os.path.join(os.environ["TEST_SRCDIR"], "ljmkit", "exporters", "svg", "svg_dom_harness.js")
PW, XPAD = 1180, 10


def tree(e):
    return {"tag": e.tag, "attrs": dict(e.attrib), "text": e.text or "",
            "children": [tree(c) for c in e]}


def frames(root):
    out = []
    for g in root.find(".//%sg[@id='frames']" % SVG).findall(SVG + "g"):
        t = g.find(SVG + "title").text
        out.append({"x": int(g.get(LJM + "x")), "v": int(g.get(LJM + "v")),
                    "d": int(g.get(LJM + "depth")), "name": t[:t.rindex(" (")]})
    return out


def close(a, b):
    return abs(a - b) < 0.011


def check_zoom(tag, fr, state, z):
    zf = fr[z]
    scale = PW / zf["v"]
    T.check("hide" not in state["unzoom"], "%s: Reset Zoom not shown" % tag)
    for f, s in zip(fr, state["frames"]):
        inside = f["d"] >= zf["d"] and zf["x"] <= f["x"] and f["x"] + f["v"] <= zf["x"] + zf["v"]
        above = f["d"] < zf["d"] and f["x"] <= zf["x"] and zf["x"] + zf["v"] <= f["x"] + f["v"]
        cls = set((s["cls"] or "").split())
        if inside:
            T.check("hide" not in cls and "dim" not in cls and close(s["x"], XPAD + (f["x"] - zf["x"]) * scale)
                    and close(s["w"], f["v"] * scale), "%s: zoomed %r placed at %r" % (tag, f["name"], s))
        elif above:
            T.check("dim" in cls and close(s["x"], XPAD) and close(s["w"], PW),
                    "%s: ancestor %r not full width and dimmed: %r" % (tag, f["name"], s))
        else:
            T.check("hide" in cls, "%s: %r outside the zoom not hidden" % (tag, f["name"]))
        lab = s["label"]
        T.check(lab == "" or lab == f["name"] or (lab.endswith("..") and f["name"].startswith(lab[:-2])),
                "%s: label %r" % (tag, lab))


def main():
    node = shutil.which("node") or shutil.which("nodejs")
    if not node:
        sys.exit("svg_script_test: node not found (Debian package nodejs) -- cannot run the SVG's script")
    d = T.tmpdir()
    ran = 0
    for prof in T.corpus() + [T.write_hostile(d)]:
        out = os.path.join(d, "s.svg")
        if T.convert_ok(prof, out) is None:
            continue
        tag = os.path.basename(prof)
        root = ET.parse(out).getroot()
        fr = frames(root)
        if len(fr) < 3:
            continue  # nothing to zoom into
        z = max(range(1, len(fr)), key=lambda i: (fr[i]["d"] > 1, fr[i]["v"]))  # a big inner frame
        term = "lua"
        p = subprocess.run([node, HARNESS], input=json.dumps(
            {"svg": tree(root), "clicks": [z, None], "search": term}).encode(),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if not T.check(p.returncode == 0, "%s: script failed: %s" % (tag, p.stderr.decode()[-800:])):
            continue
        res = json.loads(p.stdout)
        check_zoom(tag, fr, res["states"][0], z)
        reset = res["states"][1]
        T.check("hide" in reset["unzoom"], "%s: Reset Zoom still shown" % tag)
        total = fr[0]["v"]
        for f, s in zip(fr, reset["frames"]):
            w = PW if f["d"] == 0 else f["v"] * PW / total
            T.check(close(s["w"], w) and "hide" not in (s["cls"] or ""), "%s: reset %r: %r" % (tag, f["name"], s))
        T.check(res["details"].startswith("all (") and res["details"].endswith("%)"),
                "%s: details %r" % (tag, res["details"]))
        # search: magenta frames are exactly the matching ones; share of total
        hits = [i for i, f in enumerate(fr) if f["d"] > 0 and re.search(term, f["name"])]
        got = [i for i, s in enumerate(res["search"]) if s["fill"] == "rgb(230,0,230)"]
        T.check(got == hits, "%s: search marked %r, expected %r" % (tag, got, hits))
        spans, covered, end = sorted((fr[i]["x"], fr[i]["x"] + fr[i]["v"]) for i in hits), 0, -1
        for a, b in spans:
            a = max(a, end)
            if b > a:
                covered += b - a
                end = b
        want = "Matched: %.2f%%" % (100.0 * covered / total if total else 0)
        T.check(res["matched"] == want, "%s: %r, expected %r" % (tag, res["matched"], want))
        ran += 1
    T.finish("svg_script_test", ran)


main()
