#!/usr/bin/python3
"""The SVG flame graph in a real browser (headless Chromium via
playwright-core): corpus profiles and the hostile-names stream converted
with `ljm convert` (default value and --value inuse_bytes), each opened from
a file:// URL and checked for

* no console errors and no page errors;
* width: the graph fills the window at two window widths (frames' bounding
  boxes scale with it, labels re-fitted), also while zoomed; as an <img>
  (no script) it keeps the width it was written for;
* hover: the details line shows the frame's <title>, whose name, value and
  percent agree with the frame's ljm:v and the graph's ljm:total;
* click to zoom: the clicked frame spans the full width, the frames inside it
  are scaled, the rest hidden, its ancestors dimmed; Reset Zoom restores;
* search (the Search button's prompt, and Ctrl-F): the matching frames are
  highlighted and "Matched:" reports their share of the total, computed here
  from ljm:v without counting a match nested in another one twice;
* a sampled stream (testdata/ext/sampled.ljm): the subtitle shows the
  independent reader's (tests/lib/ljmread.py) estimate and the estimates'
  sentence, inside the window at both widths.

Every expectation comes from the SVG file itself (parsed here), never from
hard-coded frame names. `--group-by plugin` of testdata/ext/labelled.ljm:
the same checks, and a purple frame per plugin above the root with its
bytes. Screenshots go to the test's outputs folder and to /tmp/browser-shots."""
import os
import re
import time
import xml.etree.ElementTree as ET

import browser_lib as B

T = B.T
SVG = "{http://www.w3.org/2000/svg}"
LJM = "{urn:ljmkit:flamegraph}"
XPAD = 10
TOL = 0.05                  # px: attributes carry 2 decimals
WIDTHS = (900, 1500)        # the two window widths
HIGHLIGHT = "rgb(230,0,230)"
TITLE = re.compile(r"^(.*) \(([0-9,]+) ([a-z]+), ([0-9]+\.[0-9]{2})%\)$", re.S)
PROFILES = [("v3", "test.ljm"), ("v3", "cfuncs.ljm"), ("v3", "jit_on.ljm"), ("v3", "dynload.ljm"),
            ("ext", "sampled.ljm")]
SHOT_OF = ("jit_on.ljm", "alloc_bytes")  # the page the screenshots show

# -- What the page shows (run in the page) ----------------------------------

MEASURE = r"""() => {
  const box = (e) => { if (!e) return null; const r = e.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height}; };
  const txt = (id) => { const e = document.getElementById(id); return e ? e.textContent : null; };
  const svg = document.documentElement;
  const frames = [...document.getElementById("frames").children].map((g) => {
    const r = g.querySelector("rect"), t = g.querySelector("text"), cs = getComputedStyle(g);
    return {box: box(r), cls: g.getAttribute("class") || "", display: cs.display,
            opacity: +cs.opacity, fill: r.getAttribute("fill"),
            cfill: getComputedStyle(r).fill, label: t ? t.textContent : ""};
  });
  const un = document.getElementById("unzoom");
  return {vw: window.innerWidth, vh: window.innerHeight, svg: box(svg), frames,
          background: box(document.getElementById("background")),
          title: box(document.getElementById("title")),
          search: box(document.getElementById("search")),
          unzoom: {box: box(un), display: getComputedStyle(un).display},
          details: txt("details"), matched: txt("matched")};
}"""

# The root frame is w px wide once the script has laid the graph out.
ROOT_WIDTH = r"""(w) => {
  const r = document.querySelector("#frames > g > rect").getBoundingClientRect();
  return Math.abs(r.width - w) < 0.05 ? r.width : null;
}"""

DETAILS = r"""() => document.getElementById("details").textContent"""

SUBTITLE = r"""() => { const e = document.getElementById("subtitle"), r = e.getBoundingClientRect();
  return {text: e.textContent, x: r.left, w: r.width, vw: window.innerWidth}; }"""

# -- The file's own figures ---------------------------------------------------


def parse_svg(path):
    root = ET.parse(path).getroot()
    out = []
    for g in root.find(".//%sg[@id='frames']" % SVG).findall(SVG + "g"):
        title = g.find(SVG + "title").text or ""
        m = TITLE.match(title)
        out.append({"title": title, "name": m.group(1) if m else None,
                    "shown": int(m.group(2).replace(",", "")) if m else None,
                    "unit": m.group(3) if m else None, "pct": m.group(4) if m else None,
                    "x": int(g.get(LJM + "x")), "v": int(g.get(LJM + "v")),
                    "d": int(g.get(LJM + "depth")), "cls": g.get("class"),
                    "fill": g.find(SVG + "rect").get("fill")})
    # parent index, from the depth-first order and depths
    stack = []
    for i, f in enumerate(out):
        del stack[f["d"]:]
        f["parent"] = stack[-1] if stack else None
        stack.append(i)
    return root, out


def ancestors(fr, i):
    p = fr[i]["parent"]
    while p is not None:
        yield p
        p = fr[p]["parent"]


def u16(s):
    return s.encode("utf-16-le", "surrogatepass")


def label_ok(label, name, w):
    """The script's rule: the name when it fits (7 px a character, 6 px of
    padding, in UTF-16 units), else its start and "..", else nothing. A
    width close to a step may round either way."""
    n, lab = u16(name), u16(label)
    for ww in (w - 0.02, w + 0.02):
        c = int((ww - 6) // 7)
        if len(n) <= 2 * c:
            want = n
        elif c < 5:
            want = b""
        else:
            want = n[:2 * (c - 2)] + u16("..")
        if lab == want:
            return True
    return False


def near(a, b, tol=TOL):
    return abs(a - b) <= tol


# -- Checks -------------------------------------------------------------------


def check_layout(tag, fr, total, st, zoom=None):
    """Every frame where the script must put it in a window of st["vw"]
    pixels: unzoomed, or zoomed into frame index zoom."""
    vw = st["vw"]
    pw = vw - 2 * XPAD
    T.check(near(st["svg"]["w"], vw, 0.5) and near(st["background"]["w"], vw, 0.5),
            "%s: SVG %.2f / background %.2f px wide in a %d px window"
            % (tag, st["svg"]["w"], st["background"]["w"], vw))
    T.check(near(st["title"]["x"] + st["title"]["w"] / 2, vw / 2, 1.0),
            "%s: title not centred in %d px: %r" % (tag, vw, st["title"]))
    T.check(near(st["search"]["x"] + st["search"]["w"], vw - XPAD, 2.0),
            "%s: Search not at the right edge of %d px: %r" % (tag, vw, st["search"]))
    x0, v0, d0 = 0, total, 0
    if zoom is not None:
        x0, v0, d0 = fr[zoom]["x"], fr[zoom]["v"], fr[zoom]["d"]
    scale = pw / v0 if v0 else 0
    bad = []
    for i, (f, s) in enumerate(zip(fr, st["frames"])):
        cls = set(s["cls"].split())
        inside = zoom is None or (f["d"] >= d0 and x0 <= f["x"] and f["x"] + f["v"] <= x0 + v0)
        above = zoom is not None and f["d"] < d0 and f["x"] <= x0 and x0 + v0 <= f["x"] + f["v"]
        b = s["box"]
        if inside:
            want_x = XPAD + (f["x"] - x0) * scale
            want_w = pw if f["d"] == 0 else f["v"] * scale
            ok = (s["display"] != "none" and "dim" not in cls and s["opacity"] == 1
                  and near(b["x"], want_x) and near(b["w"], want_w))
            what = "x %.2f w %.2f, want %.2f %.2f" % (b["x"], b["w"], want_x, want_w)
        elif above:
            ok = (s["display"] != "none" and "dim" in cls and near(s["opacity"], 0.5, 0.01)
                  and near(b["x"], XPAD) and near(b["w"], pw))
            what = "ancestor: %s opacity %s x %.2f w %.2f" % (s["cls"], s["opacity"], b["x"], b["w"])
        else:
            ok = s["display"] == "none" and b["w"] == 0
            what = "outside the zoom but %s" % s["display"]
        if ok and s["display"] != "none":
            ok = label_ok(s["label"], f["name"], b["w"])
            what = "label %s in %.2f px" % (B.short(s["label"]), b["w"])
        if not ok:
            bad.append("%s: %s" % (B.short(f["name"]), what))
    T.check(not bad, "%s: %d frames misplaced at %d px%s: %s"
            % (tag, len(bad), vw, "" if zoom is None else " zoomed", "; ".join(bad[:5])))
    want_unzoom = "none" if zoom is None else "inline"
    T.check((st["unzoom"]["display"] == "none") == (zoom is None),
            "%s: Reset Zoom display %s, want %s" % (tag, st["unzoom"]["display"], want_unzoom))


def centre(box):
    return box["x"] + box["w"] / 2, box["y"] + box["h"] / 2


def check_hover(tag, br, fr, total, st):
    """Hovers a few frames (root, widest, a narrow one) like a mouse does."""
    cand = [i for i, s in enumerate(st["frames"]) if s["box"]["w"] >= 3]
    picks = {0}
    rest = [i for i in cand if i]
    if rest:
        picks.add(max(rest, key=lambda i: fr[i]["v"]))
        picks.add(min(rest, key=lambda i: (fr[i]["v"], -fr[i]["d"])))
        picks.add(max(rest, key=lambda i: (fr[i]["d"], fr[i]["v"])))
    for i in sorted(picks):
        f = fr[i]
        x, y = centre(st["frames"][i]["box"])
        br.call("move", x=x, y=y)
        got = br.eval(DETAILS)
        T.check(got == f["title"], "%s: hovering %s shows %s, its title is %s"
                % (tag, B.short(f["name"]), B.short(got), B.short(f["title"])))
        m = TITLE.match(got or "")
        if T.check(m is not None, "%s: details %r not NAME (N unit, P%%)" % (tag, got)):
            pct = 100.0 * f["v"] / total if total else 100.0
            T.check(m.group(1) == f["name"] and int(m.group(2).replace(",", "")) == f["v"]
                    and abs(float(m.group(4)) - pct) <= 0.005 + 1e-9,
                    "%s: details %s vs ljm:v %d of ljm:total %d" % (tag, B.short(got), f["v"], total))
    br.call("move", x=2, y=2)  # off the frames: the line empties
    got = br.eval(DETAILS)
    T.check(got.strip() == "", "%s: details %r after the mouse left" % (tag, got))


def zoom_target(fr, st):
    """A frame with children, not the whole graph, wide enough to click:
    the deepest such, then the widest."""
    kids = {f["parent"] for f in fr if f["parent"] is not None}
    cand = [i for i in kids if i and st["frames"][i]["box"]["w"] >= 4]
    if not cand:
        cand = [i for i, s in enumerate(st["frames"]) if i and s["box"]["w"] >= 4]
    if not cand:
        return None
    return max(cand, key=lambda i: (fr[i]["v"] < fr[0]["v"], fr[i]["d"], fr[i]["v"]))


def regex_escape(s):
    """A literal for both JavaScript's RegExp and Python's re."""
    return re.sub(r"([\\^$.*+?()\[\]{}|/-])", r"\\\1", s)


def search_terms(fr):
    """Two searches derived from the names: a literal that several frames
    contain, preferably nested in one another (so the share must not count
    them twice), and an anchored alternation of two names."""
    names = sorted({f["name"] for f in fr[1:]})
    if not names:
        return []
    best = None
    for n in names[:300]:
        hits = [i for i, f in enumerate(fr) if i and n in f["name"]]
        nested = any(p in hits for i in hits for p in ancestors(fr, i))
        key = (nested, len(hits) < len(fr) - 1, len(hits), -len(n))
        if best is None or key > best[0]:
            best = (key, n)
    terms = [regex_escape(best[1])]
    leaves = sorted({f["name"] for i, f in enumerate(fr) if i and f["d"] >= 2}) or names
    two = [leaves[0], leaves[-1]]
    terms.append("^" + regex_escape(two[0]) + "$|^" + regex_escape(two[1]) + "$")
    return terms


def expected_search(fr, total, term):
    rx = re.compile(term)
    hits = {i for i, f in enumerate(fr) if f["d"] > 0 and rx.search(f["name"])}
    outer = [i for i in hits if not any(p in hits for p in ancestors(fr, i))]
    share = 100.0 * sum(fr[i]["v"] for i in outer) / total if total else 0.0
    return hits, share


def check_search(tag, br, fr, total, term, how):
    hits, share = expected_search(fr, total, term)
    br.call("answer", text=term)
    if how == "button":
        st = br.eval(MEASURE)
        x, y = centre(st["search"])
        br.call("click", x=x, y=y)
    else:
        br.call("key", key="Control+f")
    dialogs = br.call("dialogs")
    T.check(len(dialogs) == 1 and dialogs[0]["type"] == "prompt",
            "%s: search by %s opened %r, not one prompt" % (tag, how, dialogs))
    st = br.eval(MEASURE)
    got = {i for i, s in enumerate(st["frames"]) if s["fill"] == HIGHLIGHT}
    T.check(got == hits, "%s: search %s (%s) highlighted %s, the names match %s"
            % (tag, B.short(term), how, sorted(got)[:20], sorted(hits)[:20]))
    T.check(all(st["frames"][i]["cfill"] == "rgb(230, 0, 230)" for i in hits),
            "%s: highlighted frames not drawn magenta" % tag)
    T.check(all(s["fill"] == f["fill"] for i, (f, s) in enumerate(zip(fr, st["frames"]))
                if i not in hits), "%s: frames that do not match changed colour" % tag)
    m = re.match(r"^Matched: ([0-9]+\.[0-9]{2})%$", st["matched"] or "")
    T.check(m is not None and abs(float(m.group(1)) - share) <= 0.005 + 1e-9,
            "%s: search %s says %r, the matching frames hold %.4f%%"
            % (tag, B.short(term), st["matched"], share))
    return st


def clear_search(tag, br, fr):
    br.call("key", key="Escape")
    st = br.eval(MEASURE)
    T.check(all(s["fill"] == f["fill"] for f, s in zip(fr, st["frames"]))
            and (st["matched"] or "").strip() == "",
            "%s: Escape left the search: %r" % (tag, st["matched"]))


def wait_width(br, tag, vw):
    """Waits (briefly) for the script to lay the graph out in vw pixels."""
    try:
        br.wait_for(ROOT_WIDTH, vw - 2 * XPAD, timeout=10000)
    except RuntimeError:
        T.check(False, "%s: the graph was not laid out in the %d px window" % (tag, vw))


def check_subtitle(br, tag, want, shoot):
    """A sampled stream's subtitle, as shown, against want (the reader's
    estimate and sentence)."""
    sub = br.eval(SUBTITLE)
    T.check(sub["text"].endswith(want) and sub["x"] >= 0 and sub["x"] + sub["w"] <= sub["vw"],
            "%s: subtitle %r at x %.0f..%.0f of %d px, want ...%r"
            % (tag, sub["text"], sub["x"], sub["x"] + sub["w"], sub["vw"], want))
    if shoot:
        br.screenshot("svg_sampled_%d.png" % sub["vw"])


def check_page(br, path, tag, shot, sampled=None):
    root, fr = parse_svg(path)
    total = int(root.get(LJM + "total"))
    height = float(root.get("height"))
    T.check(all(f["name"] is not None for f in fr), "%s: a <title> is not NAME (N unit, P%%)" % tag)
    if any(f["name"] is None for f in fr):
        return
    vh = int(min(max(100, height), 4000))  # the whole graph in view
    br.call("viewport", width=WIDTHS[0], height=vh)
    status = br.call("goto", url="file://" + path)
    T.check(status in (None, 0, 200), "%s: loading gave %r" % (tag, status))
    wait_width(br, tag, WIDTHS[0])
    st0 = br.eval(MEASURE)
    check_layout(tag, fr, total, st0)
    if sampled:
        check_subtitle(br, tag, sampled, shot[1] == "alloc_bytes")

    # The window grows: everything is laid out again in the new width.
    br.call("viewport", width=WIDTHS[1], height=vh)
    wait_width(br, tag, WIDTHS[1])
    st = br.eval(MEASURE)
    check_layout(tag, fr, total, st)
    if sampled:
        check_subtitle(br, tag, sampled, shot[1] == "alloc_bytes")
    k = (WIDTHS[1] - 2 * XPAD) / (WIDTHS[0] - 2 * XPAD)
    off = [f["name"] for f, a, b in zip(fr, st0["frames"], st["frames"])
           if not (near(b["box"]["w"], a["box"]["w"] * k, 2 * TOL * k)
                   and near(b["box"]["x"] - XPAD, (a["box"]["x"] - XPAD) * k, 2 * TOL * k))]
    T.check(not off, "%s: %d frames did not scale by %.4f with the window: %s"
            % (tag, len(off), k, B.short(off[:5], 300)))
    changed = sum(a["label"] != b["label"] for a, b in zip(st0["frames"], st["frames"]))
    want_change = any(not label_ok(a["label"], f["name"], b["box"]["w"])
                      for a, f, b in zip(st0["frames"], fr, st["frames"]))
    T.check(changed > 0 or not want_change, "%s: labels not re-fitted after the resize" % tag)

    check_hover(tag, br, fr, total, st)

    shoot = shot and SHOT_OF == shot
    terms = search_terms(fr)
    if terms:
        check_search(tag, br, fr, total, terms[0], "button")
        if shoot:
            br.screenshot("svg_search.png")
        clear_search(tag, br, fr)
        check_search(tag, br, fr, total, terms[1], "ctrl-f")
        clear_search(tag, br, fr)
    elif shoot:
        br.screenshot("svg_search.png")

    z = zoom_target(fr, st)
    if z is not None:
        x, y = centre(st["frames"][z]["box"])
        br.call("click", x=x, y=y)
        st = br.eval(MEASURE)
        check_layout(tag + " zoom %s" % B.short(fr[z]["name"]), fr, total, st, z)
        T.check(near(st["frames"][z]["box"]["w"], WIDTHS[1] - 2 * XPAD),
                "%s: the clicked frame does not span the width" % tag)
        if shoot:
            br.screenshot("svg_zoom.png")
        # Resized while zoomed: the zoom is kept, in the new width.
        br.call("viewport", width=WIDTHS[0], height=vh)
        wait_width(br, tag, WIDTHS[0])
        st = br.eval(MEASURE)
        check_layout(tag + " zoom %s resized" % B.short(fr[z]["name"]), fr, total, st, z)
        # Reset Zoom, clicked like a user.
        x, y = centre(st["unzoom"]["box"])
        br.call("click", x=x, y=y)
        st = br.eval(MEASURE)
        check_layout(tag + " after Reset Zoom", fr, total, st)
    errs = br.errors()
    T.check(not errs, "%s: console or page errors: %r" % (tag, errs[:5]))


IMG = r"""() => { const i = document.getElementById("g");
  return i.complete && i.naturalWidth ? [i.naturalWidth, i.naturalHeight] : null; }"""


def check_as_image(br, path, tag):
    """Without its script (an <img>), the graph keeps the layout it was
    written with: the viewBox's size is its natural size."""
    root = ET.parse(path).getroot()
    vb = [float(v) for v in root.get("viewBox").split()]
    page = os.path.join(os.path.dirname(path), "img.html")
    with open(page, "w") as f:
        f.write('<!DOCTYPE html><html><body><img id="g" src="%s"></body></html>'
                % os.path.basename(path))
    br.call("goto", url="file://" + page)
    try:
        got = br.wait_for(IMG, timeout=10000)
    except RuntimeError as e:
        got = str(e)
    T.check(got == [vb[2], vb[3]], "%s: as an <img> %r, its viewBox says %r" % (tag, got, vb[2:]))
    errs = br.errors()
    T.check(not errs, "%s: <img> page errors: %r" % (tag, errs[:5]))


# testdata/ext/labelled.ljm by plugin: its docstring's table, allocated bytes
GROUPED = {"plugin=auth": 292, "plugin=(other)": 57, "plugin=json": 40, "plugin=(none)": 10}


def check_grouped(br, args, d):
    """`ljm convert --group-by plugin`: the page passes check_page, and the
    frames right above the root are one per plugin, with its bytes, in the
    label colour (purple). Returns the pages shown (1)."""
    prof = B.corpus_file("labelled.ljm", "ext")
    out = os.path.join(d, "labelled.grouped.svg")
    B.convert(args.ljm, prof, out, ["--group-by", "plugin"])
    tag = "labelled.ljm [--group-by plugin]"
    try:
        check_page(br, out, tag, None)
        br.screenshot("svg_grouped.png")
    except RuntimeError as e:
        T.check(False, "%s: browser: %s" % (tag, e))
    _, fr = parse_svg(out)
    tops = {f["name"]: f["v"] for f in fr if f["d"] == 1}
    T.check(tops == GROUPED, "%s: frames above the root %r, want %r" % (tag, tops, GROUPED))
    purple = [f for f in fr if f["d"] == 1 and re.match(r"rgb\((1[5-9]\d),(1[0-3]\d),(2[0-3]\d)\)", f["fill"])]
    T.check(len(purple) == len(GROUPED), "%s: label frames are purple: %r"
            % (tag, [f["fill"] for f in fr if f["d"] == 1]))
    return 1


def main():
    args = B.parse_args()
    d = B.tmpdir("svg-")
    profiles = [B.corpus_file(p, folder) for folder, p in PROFILES] + [B.nasty_profile(d)]
    br = B.Browser(args)
    t0 = time.time()
    ran = 0
    try:
        br.call("page", width=WIDTHS[0], height=700)
        for prof in profiles:
            for kind in ("alloc_bytes", "inuse_bytes"):
                base = os.path.basename(prof)
                tag = "%s [%s]" % (base, kind)
                out = os.path.join(d, "%s.%s.svg" % (base, kind))
                extra = [] if kind == "alloc_bytes" else ["--value", kind]
                B.convert(args.ljm, prof, out, extra)
                reader = T.reader_figures(prof) if base == T.SAMPLED else None
                sampled = reader and "%s bytes in total (%s)" % (
                    "{:,}".format(reader[kind]), T.sampled_note(reader["sample_rate"]))
                try:
                    check_page(br, out, tag, (base, kind), sampled)
                    if ran == 0:
                        check_as_image(br, out, tag)
                except RuntimeError as e:
                    T.check(False, "%s: browser: %s" % (tag, e))
                ran += 1
        ran += check_grouped(br, args, d)
    finally:
        br.close()
    print("svg_browser_test: %d pages in %.1fs, %d checks passed" % (ran, time.time() - t0, T.CHECKS.passed))
    T.finish("svg_browser_test", ran)


main()
