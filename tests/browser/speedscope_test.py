#!/usr/bin/python3
"""speedscope (its web app from npm, served over http://127.0.0.1) imports
`ljm convert -o x.folded` output through #profileURL=: it must say it
imports a collapsed stack file, show the title, and its Sandwich table must
list every frame name of the file with the self and total values computed
here from the folded lines; no console errors, no page errors. For a
sampled stream (testdata/ext/sampled.ljm) the largest total it shows (its
root frame's) is the independent reader's estimate of the bytes allocated.
Grouped by plugin (`--group-by plugin`, testdata/ext/labelled.ljm): the
plugin roots' totals are the bytes worked out by hand. A time window
(`--from 0.004` of testdata/ext/stacked.ljm): the file's bytes are the
independent reader's for that window, and speedscope lists them."""
import os
import re
import time
import urllib.parse

import browser_lib as B
import ljmread

T = B.T
PROFILES = [("v3", "jit_on.ljm"), ("v3", "cfuncs.ljm"), ("ext", "sampled.ljm")]
# `--group-by plugin` of testdata/ext/labelled.ljm: a root per plugin, its bytes
GROUPED = {"plugin=auth": 292, "plugin=(other)": 57, "plugin=json": 40, "plugin=(none)": 10}

ROWS = r"""() => [...document.querySelectorAll("tr")]
  .filter((tr) => tr.cells.length === 3)
  .map((tr) => [...tr.cells].map((c) => c.textContent))
  .filter((r) => /^[0-9,]+ \(/.test(r[0]))"""


def check_profile(br, base, name, folded, shoot, reader=None):
    title = "ljmkit %s" % name
    url = "%s/speedscope/index.html#profileURL=%s&title=%s" % (
        base, urllib.parse.quote(base + "/" + name, safe=""), urllib.parse.quote(title, safe=""))
    br.call("page", width=1400, height=900)  # a fresh document: the app reads the hash once
    status = br.call("goto", url=url)
    T.check(status == 200, "%s: speedscope page: HTTP %r" % (name, status))
    try:
        br.wait_for(B.SPEEDSCOPE_LOADED, title, timeout=20000)
    except RuntimeError as e:
        T.check(False, "%s: speedscope did not show the profile: %s" % (name, e))
    log = br.call("log")
    T.check(any(m["type"] == "log" and re.match(r"^Importing as collapsed stack", m["text"])
                for m in log),
            "%s: speedscope did not import a collapsed stack file: %r"
            % (name, [m["text"] for m in log][:8]))
    errs = [m for m in log if m["type"] in ("error", "pageerror")]
    if shoot:
        br.screenshot("speedscope_flamechart.png")
    tab = br.eval(B.SPEEDSCOPE_TAB, "Sandwich")
    if not T.check(tab is not None, "%s: no Sandwich tab" % name):
        return
    br.call("click", x=tab["x"], y=tab["y"])
    want = B.folded_figures(folded)
    try:
        rows = br.wait_for(r"""(n) => { const r = (%s)(); return r.length >= n ? r : null; }""" % ROWS,
                           len(want), timeout=10000)
    except RuntimeError:
        rows = br.eval(ROWS)
    got = {r[2]: (B.sandwich_number(r[1]), B.sandwich_number(r[0])) for r in rows}
    T.check(len(rows) == len(want), "%s: Sandwich lists %d symbols, the file has %d names"
            % (name, len(rows), len(want)))
    for n, (self_v, total_v) in sorted(want.items()):
        T.check(got.get(n) == (self_v, total_v),
                "%s: Sandwich row for %s is (self, total) %r, the file says %r"
                % (name, B.short(n), got.get(n), (self_v, total_v)))
    if shoot:
        br.screenshot("speedscope_sandwich.png")
    if name.startswith("labelled_by_plugin"):
        roots = {n: got.get(n, (None, None))[1] for n in GROUPED}
        T.check(roots == GROUPED, "%s: Sandwich totals of the plugin roots %r, want %r"
                % (name, roots, GROUPED))
        br.screenshot("speedscope_grouped_sandwich.png")
    if reader:
        top = max((t for _, t in got.values() if t is not None), default=None)
        T.check(top == reader["alloc_bytes"], "%s: largest total %r, the reader's estimate %d"
                % (name, top, reader["alloc_bytes"]))
        br.screenshot("speedscope_sampled_sandwich.png")
    errs += br.errors()
    T.check(not errs, "%s: console or page errors: %r" % (name, errs[:5]))


def main():
    args = B.parse_args()
    root, _ = B.speedscope_root(args, "speedscope-")
    cases = []
    for folder, p in PROFILES:
        name = os.path.splitext(p)[0] + ".folded"
        data = B.convert(args.ljm, B.corpus_file(p, folder), os.path.join(root, name))
        reader = T.reader_figures(B.corpus_file(p, folder))
        cases.append((name, data.decode("utf-8"), reader if reader["sample_rate"] else None))
    # one root frame per plugin (testdata/ext/labelled.ljm's table by plugin)
    name = "labelled_by_plugin.folded"
    data = B.convert(args.ljm, B.corpus_file("labelled.ljm", "ext"), os.path.join(root, name),
                     ["--group-by", "plugin"])
    cases.append((name, data.decode("utf-8"), None))
    # a time window (--from): the blocks allocated from its start
    name = "window_stacked.folded"
    stacked = B.corpus_file("stacked.ljm", "ext")
    data = B.convert(args.ljm, stacked, os.path.join(root, name), ["--from", "0.004"])
    with open(stacked, "rb") as fh:
        want = ljmread.totals(fh.read(), (4000, 2**64 - 1))["alloc_bytes"]
    got = sum(int(ln.rpartition(" ")[2]) for ln in data.decode().splitlines() if ln)
    T.check(got == want, "%s: the folded lines add up to %d, the reader's window %d"
            % (name, got, want))
    cases.append((name, data.decode("utf-8"), None))
    name = "nasty.folded"
    data = B.convert(args.ljm, B.nasty_profile(B.tmpdir("nasty-")), os.path.join(root, name))
    cases.append((name, data.decode("utf-8"), None))
    httpd, base = B.serve(root)
    br = B.Browser(args)
    t0 = time.time()
    try:
        for i, (name, folded, reader) in enumerate(cases):
            try:
                check_profile(br, base, name, folded, i == 0, reader)
            except RuntimeError as e:
                T.check(False, "%s: browser: %s" % (name, e))
    finally:
        br.close()
        httpd.shutdown()
    print("speedscope_test: %d profiles in %.1fs, %d checks passed"
          % (len(cases), time.time() - t0, T.CHECKS.passed))
    T.finish("speedscope_test", len(cases))


main()
