#!/usr/bin/python3
"""The heap as a flame graph in the viewers people use: a heap snapshot of
testdata/heap/app.lua (recorded here under the system's LuaJIT) converted by
`ljm convert` and opened in

* Chromium, the SVG: the root frame's value is the snapshot's bytes (as
  `ljm heap --json` counts them), and the frames the folded file names are
  drawn ("[1..50]", "sessions", "cache");
* pprof's web UI (`go tool pprof -http`): the flame graph's root box shows
  the total `go tool pprof -top` prints, and has a box for the arrays folded
  into one frame and for the module's cache;
* speedscope: the .speedscope.json imports with its title, and the .folded
  file's Sandwich table shows, for every frame name, the self and total
  bytes computed here from the folded lines, which add up to the snapshot;
* Chromium's own DevTools, the .heapprofile (Memory panel, "Load profile"):
  its Heavy and Tree views show every frame's self and total bytes as the
  file has them, and the Tree adds up to the snapshot.

No console or page errors anywhere; screenshots in the test's outputs and
/tmp/browser-shots.
usage: heap_flame_test.py --ljm LJM --app-dir DIR [--npm-dir D] [--chromium C]"""
import json
import os
import re
import signal
import subprocess
import sys
import urllib.parse

import browser_lib as B
import devtools_lib as D

T = B.T

ROWS = r"""() => [...document.querySelectorAll("tr")]
  .filter((tr) => tr.cells.length === 3)
  .map((tr) => [...tr.cells].map((c) => c.textContent))
  .filter((r) => /^[0-9,]+ \(/.test(r[0]))"""

SVG_FRAMES = r"""() => {
  const f = document.getElementById("frames");
  if (!f) return null;
  return [...f.children].map((g) => ({title: (g.querySelector("title") || {}).textContent || "",
    v: g.getAttributeNS("urn:ljmkit:flamegraph", "v"), depth: g.getAttributeNS("urn:ljmkit:flamegraph", "depth")}));
}"""

def record(ljm, app_dir, work):
    snap, r = T.record_heap_app(ljm, app_dir, work)
    if r.returncode != 0 or not os.path.exists(snap):
        sys.exit("ljm record app.lua: exit %d: %s" % (r.returncode, r.stderr))
    j = json.loads(subprocess.run([ljm, "heap", "--json", snap], capture_output=True, text=True).stdout)
    return snap, j["bytes"]


def check_svg(br, svg, total, names):
    br.call("page", width=1400, height=900)
    br.call("goto", url="file://" + svg)
    frames = br.wait_for(SVG_FRAMES, timeout=15000)
    roots = [f for f in frames if f["depth"] == "0"]
    T.check(len(roots) == 1 and int(roots[0]["v"]) == total,
            "svg in Chromium: the root frame holds %s bytes, the snapshot %d" % (roots[:1], total))
    titles = {f["title"].rsplit(" (", 1)[0] for f in frames}
    for n in names:
        T.check(n in titles, "svg in Chromium: a frame %s (%s)" % (n, B.short(sorted(titles), 300)))
    br.screenshot("heap_flame_svg.png")
    errs = br.errors()
    T.check(not errs, "svg: console or page errors: %r" % errs[:5])


def check_pprof(br, ljm, snap, work, names):
    pb = os.path.join(work, "app.pb.gz")
    B.convert(ljm, snap, pb)
    home = B.tmpdir("gohome-")
    env = dict(os.environ, HOME=home, GOCACHE=os.path.join(home, "gocache"), GOTELEMETRY="off")
    top = subprocess.run(["go", "tool", "pprof", "-top", "-sample_index=inuse_space", pb],
                         capture_output=True, text=True, env=env, timeout=300)
    m = re.search(r"of ([0-9.]+[A-Za-z]*) total", top.stdout)
    T.check(m, "go tool pprof -top: a total: %s" % (top.stdout + top.stderr)[-400:])
    port = B.free_port()
    base = "http://127.0.0.1:%d" % port
    log = open(os.path.join(work, "pprof.log"), "w")
    proc = subprocess.Popen(["go", "tool", "pprof", "-http=127.0.0.1:%d" % port, "-no_browser",
                             "-sample_index=inuse_space", pb], stdout=log, stderr=subprocess.STDOUT,
                            env=env, start_new_session=True)
    try:
        T.check(B.wait_http(base + "/ui/top", proc, timeout=90), "go tool pprof -http serves")
        br.call("page", width=1400, height=900)
        br.call("goto", url=base + "/ui/flamegraph")
        boxes = B.pprof_flame(br, 5, ["sessions"], timeout=20000)
        root = [b for b in boxes if b["name"] == "root"]
        T.check(m and root and B.pprof_same_bytes(root[0]["value"], m.group(1)),
                "pprof flame graph: root %r, -top total %r"
                % (root[0]["text"] if root else None, m.group(1) if m else None))
        shown = {b["name"] for b in boxes}
        for n in names:
            T.check(n in shown, "pprof flame graph: a box for %s (%s)" % (n, B.short(sorted(shown), 300)))
        br.wait_for(r"""(n) => document.body.innerText.includes(n)""", "sessions", timeout=15000)
        br.screenshot("heap_flame_pprof.png")
        errs = br.errors()
        T.check(not errs, "pprof: console or page errors: %r" % errs[:5])
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def check_speedscope(br, args, snap, total):
    root, _ = B.speedscope_root(args, "speedscope-heap-")
    folded = B.convert(args.ljm, snap, os.path.join(root, "app.folded")).decode("utf-8")
    B.convert(args.ljm, snap, os.path.join(root, "app.speedscope.json"))
    want = B.folded_figures(folded)
    T.check(sum(int(ln.rsplit(" ", 1)[1]) for ln in folded.splitlines()) == total,
            "folded: the lines add up to the snapshot's %d bytes" % total)
    httpd, base = B.serve(root)
    try:
        for name, shoot in (("app.speedscope.json", "heap_flame_speedscope_json.png"),
                            ("app.folded", "heap_flame_speedscope.png")):
            title = "heap " + name
            url = "%s/speedscope/index.html#profileURL=%s&title=%s" % (
                base, urllib.parse.quote(base + "/" + name, safe=""), urllib.parse.quote(title, safe=""))
            br.call("page", width=1400, height=900)
            br.call("goto", url=url)
            br.wait_for(B.SPEEDSCOPE_LOADED, title, timeout=20000)
            br.screenshot(shoot)
            errs = [m for m in br.call("log") if m["type"] in ("error", "pageerror")]
            T.check(not errs, "speedscope %s: console or page errors: %r" % (name, errs[:5]))
        tab = br.eval(B.SPEEDSCOPE_TAB, "Sandwich")
        T.check(tab is not None, "speedscope: a Sandwich tab")
        br.call("click", x=tab["x"], y=tab["y"])
        # The table draws the rows in view (the cache's keys make hundreds):
        # every row drawn must agree with the file, the largest self first
        # (the Sandwich's order).
        rows = br.wait_for(r"""(n) => { const r = (%s)(); return r.length >= n ? r : null; }""" % ROWS,
                           min(len(want), 15), timeout=15000)
        got = {r[2]: (B.sandwich_number(r[1]), B.sandwich_number(r[0])) for r in rows}
        bad = [(n, v, tuple(want.get(n, ()))) for n, v in sorted(got.items()) if v != tuple(want.get(n, ()))]
        largest = sorted(want, key=lambda n: -want[n][0])[:5]
        T.check(not bad and all(n in got for n in largest),
                "speedscope Sandwich: %d rows drawn of %d frame names, the 5 largest by self %s among them; "
                "(name, shown, file) that differ: %s" % (len(rows), len(want), largest, B.short(bad, 400)))
        br.screenshot("heap_flame_speedscope_sandwich.png")
    finally:
        httpd.shutdown()


def check_devtools(br, ljm, snap, work, total):
    hp = B.convert(ljm, snap, os.path.join(work, "app.heapprofile"))
    D.check_heap_in_devtools(br, "app.heapprofile", hp, json.loads(hp), "heap_flame", total)


def main():
    args = B.parse_args(required=("--app-dir",))
    work = B.tmpdir("heapflame-")
    snap, total = record(args.ljm, os.path.abspath(args.app_dir), work)
    svg = os.path.join(work, "app.svg")
    B.convert(args.ljm, snap, svg)
    names = ["[1..50]", "[1..200]", "sessions", "cache"]
    br = B.Browser(args)
    try:
        for check in (lambda: check_svg(br, svg, total, names),
                      lambda: check_pprof(br, args.ljm, snap, work, names),
                      lambda: check_speedscope(br, args, snap, total),
                      lambda: check_devtools(br, args.ljm, snap, work, total)):
            try:
                check()
            except RuntimeError as e:
                T.check(False, "browser: %s" % e)
    finally:
        br.close()
    print("heap_flame_test: %d checks passed" % T.CHECKS.passed)
    T.finish("heap_flame_test", 1)


main()
