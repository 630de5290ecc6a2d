#!/usr/bin/env python3
"""run.py -- the views of a big JIT-heavy program: Debian's luacheck
(lua-check) linting every file under /usr/share/lua/5.1, recorded exactly
with call stacks (`ljm record --stacks`), converted to SVG, folded,
speedscope and JSON. Prints each file's size against the stream's decoded
size, and how long Debian's Chromium takes to draw the SVG's first screen
(bench/views/draw_time.js; a screenshot lands beside the SVG). Not a test:
it prints figures.

usage: bench/views/run.py [--keep DIR] [--ljm PATH]
       (the ljm of `bazel build -c opt //:ljm` by default)
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NPM = os.environ.get("LJM_BROWSER_NPM", "/var/cache/ljmkit/npm")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", help="a directory to keep the files in")
    ap.add_argument("--ljm", help="the ljm binary")
    a = ap.parse_args()
    ljm = a.ljm
    if not ljm:
        subprocess.run(["bazel", "build", "-c", "opt", "//:ljm"], cwd=ROOT, check=True,
                       capture_output=True)
        ljm = os.path.join(subprocess.run(["bazel", "info", "-c", "opt", "bazel-bin"], cwd=ROOT,
                                          check=True, capture_output=True, text=True)
                           .stdout.strip(), "cli", "ljm")
    work = a.keep or tempfile.mkdtemp(prefix="ljm-views-")
    os.makedirs(work, exist_ok=True)
    script = os.path.join(work, "luacheck_run.lua")
    shutil.copy(os.path.join(ROOT, "testdata", "real", "luacheck_run.lua"), script)
    prof = os.path.join(work, "luacheck.ljm")
    t = time.time()
    subprocess.run([ljm, "record", "--stacks", "-o", prof, script, "/usr/share/lua/5.1"],
                   cwd=work, check=True, capture_output=True)
    size = os.path.getsize(prof)
    with open(prof, "rb") as f:
        head = f.read(4)
    if head[:2] == b"\x1f\x8b":
        with gzip.open(prof) as f:
            size = sum(len(b) for b in iter(lambda: f.read(1 << 20), b""))
    print("luacheck over /usr/share/lua/5.1, ljm record --stacks: %.1f s, stream %.1f MB decoded"
          % (time.time() - t, size / 1e6))
    for fmt, ext in (("svg", "svg"), ("folded", "folded"), ("speedscope", "speedscope.json"),
                     ("json", "json")):
        out = os.path.join(work, "luacheck." + ext)
        t = time.time()
        subprocess.run([ljm, "convert", "-q", "-f", fmt, "-o", out, prof], cwd=work, check=True)
        n = os.path.getsize(out)
        print("  %-10s %8.1f MB  %5.2fx the stream  %.1f s" % (fmt, n / 1e6, n / size,
                                                              time.time() - t))
    svg = os.path.join(work, "luacheck.svg")
    pw = os.path.join(NPM, "node_modules", "playwright-core")
    if not os.path.isdir(pw) or not shutil.which("chromium"):
        print("  Chromium: not measured (scripts/setup-tests.d/browser.sh installs it)")
    else:
        runs = []
        for _ in range(3):
            p = subprocess.run(["node", os.path.join(ROOT, "bench", "views", "draw_time.js"), pw,
                                shutil.which("chromium"), svg], capture_output=True, text=True,
                               timeout=600)
            if p.returncode:
                sys.exit("draw_time.js: " + p.stderr)
            runs.append(json.loads(p.stdout)["ms"])
        print("  Chromium draws the SVG's first screen in %d ms (best of %s ms); screenshot %s.png"
              % (min(runs), runs, svg))
    if not a.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
