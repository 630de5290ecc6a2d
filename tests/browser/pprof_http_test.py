#!/usr/bin/python3
"""pprof's own web UI on `ljm convert -o x.pb.gz` output: `go tool pprof
-http=127.0.0.1:PORT -no_browser` serves it, headless Chromium opens the
flame graph, the top table, the source listing and the graph (Graphviz)
and each must render the function names `go tool pprof -top` prints for
the same file, with no console errors and no page errors. A sampled stream
(testdata/ext/sampled.ljm): the details box, opened by a click, says the
figures are estimates, and the totals of the top page and the flame graph
are the estimates the independent reader (tests/lib/ljmread.py) computes.
Grouped by plugin (`--group-by plugin`, testdata/ext/labelled.ljm): a box
per plugin with the bytes worked out by hand."""
import html
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import browser_lib as B

T = B.T
PROFILES = [("v3", "jit_on.ljm", ()), ("v3", "cfuncs.ljm", ()), ("ext", "sampled.ljm", ()),
            ("ext", "labelled.ljm", ("--group-by", "plugin"))]
# testdata/ext/labelled.ljm by plugin (its docstring's table): allocated bytes
GROUPED = {"plugin=auth": 292, "plugin=(other)": 57, "plugin=json": 40, "plugin=(none)": 10}
TOP_ROW = re.compile(r"^\s*(\S+)\s+(\S+%)\s+(\S+%)\s+(\S+)\s+(\S+%)\s+(.+?)\s*$")

GRAPH = r"""() => {
  const svg = document.querySelector("#graph svg, svg");
  if (!svg) return null;
  const nodes = [...svg.querySelectorAll("g.node")];
  return nodes.length ? {nodes: nodes.length, text: svg.textContent} : null;
}"""

TEXT = r"""() => document.body ? document.body.innerText : "" """

# The "details" link's centre, and the box it opens (null while hidden).
DETAILS_LINK = r"""() => { const r = document.getElementById("details").getBoundingClientRect();
  return {x: r.left + r.width / 2, y: r.top + r.height / 2}; }"""
DETAILS_BOX = r"""() => { const b = document.getElementById("detailsbox");
  return b && getComputedStyle(b).display !== "none" && b.getBoundingClientRect().height > 0
    ? b.innerText : null; }"""


def go_env(home):
    return dict(os.environ, HOME=home, GOCACHE=os.path.join(home, "gocache"),
                GOPATH=os.path.join(home, "go"), GOFLAGS="-mod=mod", GOTELEMETRY="off")


def top_names(pb, env):
    """Names and the total of `go tool pprof -top -nodecount=5`."""
    p = subprocess.run(["go", "tool", "pprof", "-top", "-nodecount=5", pb],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if not T.check(p.returncode == 0, "%s: go tool pprof -top: %s" % (pb, p.stderr[-500:])):
        return [], None
    names, total, rows = [], None, False
    for ln in p.stdout.splitlines():
        m = re.search(r"of ([0-9.]+[A-Za-z]*) total", ln)
        if m:
            total = m.group(1)
        if re.match(r"^\s*flat\s+flat%", ln):
            rows = True
            continue
        m = TOP_ROW.match(ln) if rows else None
        if m:
            names.append(m.group(6))
    T.check(names, "%s: -top printed no rows: %r" % (pb, p.stdout[-500:]))
    return names, total


class PprofServer:
    """go tool pprof -http on a free loopback port, in its own process group
    (go runs the pprof binary as a child): stop() ends both."""

    def __init__(self, pb, env, log):
        for attempt in range(3):
            self.port = B.free_port()
            self.base = "http://127.0.0.1:%d" % self.port
            self.log = open(log, "w")
            self.proc = subprocess.Popen(
                ["go", "tool", "pprof", "-http=127.0.0.1:%d" % self.port, "-no_browser", pb],
                stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
            if B.wait_http(self.base + "/ui/top", self.proc, timeout=60):
                return
            self.stop()  # port taken meanwhile, or it failed: try another port
        with open(log) as f:
            sys.exit("go tool pprof -http did not serve: %s" % f.read()[-1000:])

    def stop(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait()
        self.log.close()


def open_page(br, url, tag):
    br.call("page", width=1400, height=900)
    status = br.call("goto", url=url)
    T.check(status == 200, "%s: %s: HTTP %r" % (tag, url, status))


def check_profile(br, args, prof, d, env, shoot, extra=()):
    tag = " ".join([os.path.basename(prof)] + list(extra))
    pb = os.path.join(d, os.path.splitext(os.path.basename(prof))[0] + ".pb.gz")
    B.convert(args.ljm, prof, pb, extra)
    names, total = top_names(pb, env)
    if not names:
        return
    srv = PprofServer(pb, env, os.path.join(d, tag + ".pprof.log"))
    try:
        # Flame graph: a box (with its <title>) for every -top name.
        open_page(br, srv.base + "/ui/flamegraph", tag)
        try:
            fl = B.pprof_flame(br, 1, names)
        except RuntimeError as e:
            fl = None
            T.check(False, "%s: the flame graph did not render: %s" % (tag, e))
        if fl:
            shown = {b["name"] for b in fl}
            for n in names:
                T.check(n in shown, "%s: flame graph has no box for %s (boxes: %s)"
                        % (tag, B.short(n), B.short(sorted(shown), 300)))
            root = [b for b in fl if b["name"] == "root"]
            T.check(total is None or (root and B.pprof_same_bytes(root[0]["value"], total)),
                    "%s: flame graph root %r, -top total %r"
                    % (tag, root[0]["text"] if root else None, total))
            if shoot:
                br.screenshot("pprof_flamegraph.png")
        errs = br.errors()
        T.check(not errs, "%s: flame graph console or page errors: %r" % (tag, errs[:5]))

        # Top and source: served (200) and rendered with the -top names.
        for page, need_all in (("/ui/top", True), ("/ui/source", False)):
            status, body = B.http_get(srv.base + page)
            body = html.unescape(body)
            T.check(status == 200 and any(n in body for n in names),
                    "%s: GET %s: HTTP %d, no -top name in it" % (tag, page, status))
            open_page(br, srv.base + page, tag)
            text = br.eval(TEXT)
            found = [n for n in names if n in text]
            T.check(found == names if need_all else bool(found),
                    "%s: %s shows %d of the -top names %s"
                    % (tag, page, len(found), B.short(names, 200)))
            errs = br.errors()
            T.check(not errs, "%s: %s console or page errors: %r" % (tag, page, errs[:5]))
            if shoot and page == "/ui/top":
                br.screenshot("pprof_top.png")

        # The graph (Graphviz's dot renders it into an SVG).
        open_page(br, srv.base + "/ui/", tag)
        try:
            g = br.wait_for(GRAPH, timeout=15000)
        except RuntimeError as e:
            g = None
            T.check(False, "%s: /ui/ shows no graph: %s" % (tag, e))
        if g:
            T.check(any(n in g["text"] for n in names),
                    "%s: graph nodes name none of %s" % (tag, B.short(names, 200)))
            if shoot:
                br.screenshot("pprof_graph.png")
        errs = br.errors()
        T.check(not errs, "%s: graph console or page errors: %r" % (tag, errs[:5]))
        want = T.reader_figures(prof)
        if want["sample_rate"]:
            check_sampled(br, srv, tag, want, names)
        if extra:
            check_grouped(br, srv, tag, names)
    finally:
        srv.stop()


def check_grouped(br, srv, tag, names):
    """`--group-by plugin`: the flame graph of allocated bytes has a box per
    plugin right under its root, with that plugin's bytes."""
    open_page(br, srv.base + "/ui/flamegraph?si=alloc_space&unit=B", tag)
    try:
        fl = B.pprof_flame(br, 1, names)
    except RuntimeError:
        fl = []
    for name, v in GROUPED.items():
        box = [b for b in fl if b["name"] == name]
        T.check(box and B.pprof_same_bytes(box[0]["value"], v),
                "%s: flame graph box %s %r, want %dB" % (tag, name, box[0]["text"] if box else None, v))
    br.screenshot("pprof_grouped_flamegraph.png")
    errs = br.errors()
    T.check(not errs, "%s: console or page errors: %r" % (tag, errs[:5]))


def check_sampled(br, srv, tag, want, names):
    """The pages of a sampled stream against the reader's estimates."""
    note = T.sampled_note(want["sample_rate"])
    for si, fig in (("alloc_space", "alloc_bytes"), ("inuse_space", "inuse_bytes")):
        what = "%s %s" % (tag, si)
        open_page(br, srv.base + "/ui/top?si=%s&unit=B" % si, tag)
        T.check(br.eval(DETAILS_BOX) is None, "%s: details box open before the click" % what)
        link = br.eval(DETAILS_LINK)
        br.call("click", x=link["x"], y=link["y"])
        try:
            box = br.wait_for(DETAILS_BOX, timeout=5000)
        except RuntimeError:
            box = None
        T.check(box and note in box.splitlines() and "of %dB total" % want[fig] in box,
                "%s: details box %r, want %r and %dB in total" % (what, box, note, want[fig]))
        if si == "alloc_space":
            br.screenshot("pprof_sampled_details.png")
        open_page(br, srv.base + "/ui/flamegraph?si=%s&unit=B" % si, tag)
        try:
            fl = B.pprof_flame(br, 1, names)
        except RuntimeError:
            fl = None
        root = [b for b in fl if b["name"] == "root"] if fl else []
        T.check(root and B.pprof_same_bytes(root[0]["value"], want[fig]),
                "%s: flame graph root %r, the reader's estimate %dB"
                % (what, root[0]["text"] if root else None, want[fig]))
        if si == "inuse_space":
            br.screenshot("pprof_sampled_flamegraph.png")
        errs = br.errors()
        T.check(not errs, "%s: console or page errors: %r" % (what, errs[:5]))


def main():
    args = B.parse_args()
    d = B.tmpdir("pprof-")
    env = go_env(B.tmpdir("gohome-"))
    for tool in ("go", "dot"):
        if not shutil.which(tool):
            sys.exit("%s not found (Debian packages golang-go, graphviz): run scripts/setup.sh" % tool)
    br = B.Browser(args)
    t0 = time.time()
    try:
        for i, (folder, p, extra) in enumerate(PROFILES):
            try:
                check_profile(br, args, B.corpus_file(p, folder), d, env, i == 0, extra)
            except RuntimeError as e:
                T.check(False, "%s: browser: %s" % (p, e))
    finally:
        br.close()
    print("pprof_http_test: %d profiles in %.1fs, %d checks passed"
          % (len(PROFILES), time.time() - t0, T.CHECKS.passed))
    T.finish("pprof_http_test", len(PROFILES))


main()
