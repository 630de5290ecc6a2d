#!/usr/bin/python3
"""`ljm heap --format mermaid` read by mermaid itself, and `--format dot` as
Debian's dot draws it, in Chromium.

Heap snapshots of testdata/heap/app.lua (--path-to Point, the top retainers)
and testdata/heap/names.lua (names with quotes, '#', '<', '|', '`', '&', a
newline, invalid UTF-8, a mermaid directive after U+2028; --path-to
'^Tar|%%\{') are drawn both ways. mermaid (the npm package, in the page, with
its default limits) parses each flowchart and renders it: as many
nodes and edge labels as the file has, the texts as ljm wrote them
(entity codes read back: the __name and the key whole, no markup). The DOT,
through dot -Tsvg, shows the same texts. Screenshots of both go to the
test's outputs and /tmp/browser-shots.
usage: heap_graph_browser_test.py --ljm LJM --app-dir testdata/heap [...]"""
import html
import os
import re
import shutil
import subprocess

import browser_lib as B

T = B.T

PAGE = """<!doctype html><meta charset="utf-8"><title>ljm heap</title>
<body style="margin:0;background:#fff"><div id="out"></div>
<link rel="icon" href="data:,"><script src="mermaid.min.js"></script>
<script>mermaid.initialize({ startOnLoad: false });</script>"""

RENDER = r"""async (text) => {
  try { await mermaid.parse(text); } catch (e) { return { error: "parse: " + String(e.message || e) }; }
  try {
    const r = await mermaid.render("g" + Date.now(), text);
    const out = document.getElementById("out");
    out.innerHTML = r.svg;
    const svg = out.querySelector("svg");
    svg.style.maxWidth = "none";
    const texts = (sel) => [...out.querySelectorAll(sel)].map((e) => e.textContent.replace(/\s+/g, " ").trim());
    return { nodes: texts("g.node"), edges: texts("g.edgeLabel").filter((t) => t !== ""),
             width: svg.getBoundingClientRect().width, height: svg.getBoundingClientRect().height };
  } catch (e) { return { error: "render: " + String(e.message || e) }; }
}"""

SHOW_SVG = r"""(svg) => { document.getElementById("out").innerHTML = svg;
  return [...document.querySelectorAll("g.node")].map((g) =>
    [...g.querySelectorAll("text")].map((t) => t.textContent).join("")); }"""


def heap(ljm, *args):
    r = subprocess.run([ljm, "heap"] + list(args), capture_output=True, text=True, timeout=300)
    T.check(r.returncode == 0, "ljm heap %s: exit %d %s" % (" ".join(args), r.returncode, r.stderr))
    return r.stdout


def shown(text):
    """A mermaid label as the page shows it: entity codes read, lines joined
    (without a space between: compared without white space)."""
    return squeeze(re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))), html.unescape(
        re.sub(r"#(quot|lt|gt|amp);", r"&\1;", text))))


def squeeze(s):
    return re.sub(r"\s+", "", s)


def check_one(br, ljm, name, snap, args, want_node, want_edge):
    mm = heap(ljm, "--format", "mermaid", *(args + [snap]))
    nodes = re.findall(r'^  \w+(?:\(\["|\[")([^"]*)"', mm, re.M)
    edges = re.findall(r'^  \w+ -->\|"([^"]*)"\|', mm, re.M)
    got = br.eval(RENDER, mm)
    if not T.check("error" not in got, "%s: mermaid parses and renders it (%s)" % (name, got.get("error"))):
        return
    T.check(len(got["nodes"]) == len(nodes) and len(got["edges"]) == len(edges),
            "%s: mermaid draws %d nodes and %d edge labels (%d, %d)"
            % (name, len(nodes), len(edges), len(got["nodes"]), len(got["edges"])))
    got["nodes"] = [squeeze(n) for n in got["nodes"]]
    got["edges"] = [squeeze(e) for e in got["edges"]]
    T.check(sorted(got["nodes"]) == sorted(shown(n) for n in nodes),
            "%s: each node reads as ljm wrote it (%r)" % (name, sorted(set(got["nodes"]) - {shown(n) for n in nodes})[:2]))
    T.check(sorted(got["edges"]) == sorted(shown(e) for e in edges),
            "%s: each edge label reads as ljm wrote it (%r)" % (name, sorted(set(got["edges"]) - {shown(e) for e in edges})[:2]))
    T.check(any(squeeze(want_node) in n for n in got["nodes"]) and
            any(squeeze(want_edge) in e for e in got["edges"]),
            "%s: %r among the nodes, %r among the edges" % (name, want_node, want_edge))
    br.call("viewport", width=max(800, min(4000, int(got["width"]) + 20)),
            height=max(400, min(4000, int(got["height"]) + 20)))
    br.screenshot("heap_graph_%s_mermaid.png" % name)
    dot = heap(ljm, "--format", "dot", *(args + [snap]))
    r = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, timeout=120)
    T.check(r.returncode == 0, "%s: dot -Tsvg (%s)" % (name, r.stderr[-200:]))
    texts = [squeeze(t) for t in br.eval(SHOW_SVG, r.stdout[r.stdout.find("<svg"):])]
    T.check(sorted(texts) == sorted(got["nodes"]),
            "%s: the DOT drawing's nodes read as mermaid's (%r)" % (name, sorted(set(texts) ^ set(got["nodes"]))[:2]))
    br.screenshot("heap_graph_%s_dot.png" % name, full=True)


def main():
    args = B.parse_args(required=("--app-dir",))
    ljm = args.ljm
    js = os.path.join(args.npm_dir, "node_modules", "mermaid", "dist", "mermaid.min.js")
    B.need(js, "npm mermaid")
    work = B.tmpdir("heapgraph-")
    snap, r = T.record_heap_app(ljm, os.path.abspath(args.app_dir), work, 300)
    T.check(r.returncode == 0, "ljm record app.lua: %s" % r.stderr[-300:])
    shutil.copy(os.path.join(os.path.abspath(args.app_dir), "names.lua"), work)
    names = os.path.join(work, "names.ljh")
    r = subprocess.run([ljm, "record", "-o", os.path.join(work, "names.ljm"), "names.lua", names],
                       capture_output=True, text=True, timeout=300, cwd=work)
    T.check(r.returncode == 0, "ljm record names.lua: %s" % r.stderr[-300:])
    site = os.path.join(work, "site")
    os.makedirs(site)
    shutil.copy(js, site)
    with open(os.path.join(site, "index.html"), "w") as f:
        f.write(PAGE)
    open(os.path.join(site, "favicon.ico"), "wb").close()  # asked for whatever the page says
    httpd, url = B.serve(site)
    br = B.Browser(args)
    try:
        br.call("page", width=1200, height=800)
        br.call("goto", url=url + "/index.html")
        br.wait_for("() => typeof mermaid !== 'undefined'")
        for name, s, a, node, edge in (
                ("path_to_point", snap, ["--path-to", "Point", "--top", "3"], "Point _G.points[200]", "[200]"),
                ("top", snap, ["--max", "25"], "table _G", "_G"),
                ("names", names, ["--path-to", "^Tar|%%\\{"], 'Tar"get<b>#1|`x`&\\',
                 '["p%%{init: {\'theme\':\'dark\'}}%% style:_a')):
            try:
                check_one(br, ljm, name, s, a, node, edge)
            except RuntimeError as e:
                T.check(False, "%s: browser: %s" % (name, e))
        errs = br.errors()
        T.check(not errs, "no errors in the page's console (%r)" % errs[:3])
    finally:
        br.close()
        httpd.shutdown()
    T.finish("heap_graph_browser_test", T.CHECKS.passed)


main()
