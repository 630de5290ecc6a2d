#!/usr/bin/env python3
"""names_test.py -- the names every viewer shows for a recorded program.

Records testdata/names/cache_leak.lua twice with `ljm record`, converts the
runs with the source beside them, with --source-dir from elsewhere, and with
no source at all, and checks what the real clients show:

  * functions named from their definition lines (Cache:put, serialize, M.put,
    f, Cache.new) and "main chunk", in JSON, folded stacks, SVG, Markdown,
    `go tool pprof` (-top, -list, -dot) and heaptrack_print;
  * without the source: "function <cache_leak.lua line N>", never "file:0";
  * no run-specific address in any viewer name, so two runs line up in
    `go tool pprof -diff_base` and `heaptrack_print -d`;
  * a function frame never looks like a line frame (file:line) in folded
    stacks and SVG titles;
  * pprof's views read right: -list shows the Lua source with figures, graph
    nodes split into module and function, C and INTERNAL have their own
    files, no Lua function has "unknown line numbers";
  * the stream's C symbols are LuaJIT's and libc's, not the CLI's own
    libraries' (libxml2, ICU, libstdc++).

usage: names_test.py LJM CACHE_LEAK_LUA
"""
import functools
import json
import os
import re
import shutil
import sys
import tempfile

import testlib
from checks import Checks
import ljmread

check = Checks("names_test")
LJM = os.path.abspath(sys.argv[1])
SCRIPT = os.path.abspath(sys.argv[2])
NAMED = {"Cache.new", "Cache:put", "serialize", "M.put", "f"}
ADDR = re.compile(r"0x[0-9a-fA-F]{5,}")
LINE_FRAME = re.compile(r"\.lua:\d+$")


run = functools.partial(testlib.run, timeout=300)  # run(cmd, cwd=None)


def convert(src, out, cwd, extra=()):
    p = run([LJM, "convert", *extra, "-o", out, src], cwd=cwd)
    check(p.returncode == 0, "convert %s -> %s: %s" % (src, out, p.stderr))
    return os.path.join(cwd, out)


def read(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def sites(path):
    return json.loads(read(path))["sites"]


def check_json_named(tag, path):
    ss = sites(path)
    funcs = {s["func"]: s["func_from"] for s in ss if s["kind"] == "lua"}
    for name in NAMED:
        check(funcs.get(name) == "source", "%s: %s not named from its source: %r" % (tag, name, funcs))
    check(funcs.get("main chunk") == "main", "%s: no main chunk" % tag)
    for s in ss:
        check(not ADDR.search(s["func"]), "%s: address in %r" % (tag, s["func"]))
        check(not s["func"].endswith(":0"), "%s: %r looks like file:0" % (tag, s["func"]))


def check_folded(tag, path):
    lines = read(path).splitlines()
    frames = set()
    for ln in lines:
        stack = ln.rsplit(" ", 1)[0].split(";")
        frames.update(stack)
        check(not ADDR.search(ln), "%s: address in %r" % (tag, ln))
        if stack[0] == "cache_leak.lua":
            # file ; function ; file:line [; TRACE [n]]
            check(not LINE_FRAME.search(stack[1]), "%s: function frame %r looks like a line" % (tag, stack[1]))
            check(re.match(r"^cache_leak\.lua:\d+$", stack[2]) is not None,
                  "%s: line frame %r" % (tag, stack[2]))
    for name in NAMED | {"main chunk"}:
        check(name in frames, "%s: no frame %r" % (tag, name))


def check_svg_md(tag, svg, md):
    titles = re.findall(r"<title>([^<]*)</title>", read(svg))
    names = {t[:t.rindex(" (")] for t in titles}
    for name in NAMED | {"main chunk"}:
        check(name in names, "%s: no SVG frame %r" % (tag, name))
    check(not any(ADDR.search(t) for t in titles), "%s: address in an SVG title" % tag)
    text = read(md)
    check("`Cache:put (cache_leak.lua:14)`" in text, "%s: markdown context of Cache:put" % tag)
    check(not ADDR.search(text), "%s: address in markdown" % tag)


def pprof(*args, cwd=None):
    p = run(["go", "tool", "pprof", *args], cwd=cwd)
    check(p.returncode == 0, "pprof %s: %s" % (" ".join(args), p.stderr[-300:]))
    return p.stdout


def top_names(out):
    rows = re.findall(r"^[ \t]*\S+[ \t]+\S+%[ \t]+\S+%[ \t]+\S+[ \t]+\S+%[ \t]+(.+)$", out, re.M)
    return set(rows)


def check_pprof(tag, pb, pb2, cwd):
    names = top_names(pprof("-top", "-nodecount=100", "-nodefraction=0", pb, cwd=cwd))
    for name in NAMED | {"main chunk"}:
        check("cache_leak." + name in names, "%s: -top lacks cache_leak.%s: %r" % (tag, name, names))
    check(not any(ADDR.search(n) for n in names), "%s: address in -top" % tag)
    # The source view: Lua lines with figures, no unknown line numbers.
    lst = pprof("-list", "Cache:put|serialize", pb, cwd=cwd)
    check(re.search(r"^\s*\S+B\s+\S+B\s+14:\s+self\.items\[key\] = value$", lst, re.M),
          "%s: -list does not show line 14 with its figure:\n%s" % (tag, lst[:600]))
    check("ROUTINE ======================== cache_leak.Cache:put in cache_leak.lua" in lst,
          "%s: -list routine header" % tag)
    check("unknown line numbers" not in lst, "%s: Lua function with unknown line numbers" % tag)
    # C functions and INTERNAL are listed under files of their own, not ".".
    allst = pprof("-list", ".", pb, cwd=cwd)
    heads = re.findall(r"^ROUTINE =+ (.*) in (.*)$", allst, re.M)
    check(all(f not in ("", ".") for _, f in heads), "%s: routines without a file: %r" % (tag, heads))
    check(("pmain", "[C]") in heads, "%s: C function pmain not in [C]: %r" % (tag, heads))
    # Graph nodes: module and function on their own lines, no file name.
    dot = pprof("-dot", "-nodecount=100", "-nodefraction=0", "-edgefraction=0", pb, cwd=cwd)
    labels = re.findall(r'label="([^"]*)"', dot)
    check(any(l.startswith("cache_leak\\nCache:put\\n") for l in labels),
          "%s: graph node of Cache:put: %r" % (tag, labels[:8]))
    check(not any(re.search(r"lua:\d", l) for l in labels[1:]), "%s: file:line in a graph node" % tag)
    # Two runs of one program line up: the difference is (almost) nothing.
    diff = pprof("-top", "-diff_base", pb, pb2, cwd=cwd)
    total = re.search(r"of ([0-9.]+)([kMG]?)B total", diff)
    shown = re.search(r"accounting for (-?[0-9.]+)([kMG]?)B?,", diff)
    scale = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}
    if check(total and shown, "%s: -diff_base output:\n%s" % (tag, diff[:400])):
        t = float(total.group(1)) * scale[total.group(2)]
        d = abs(float(shown.group(1)) * scale[shown.group(2)])
        check(d <= 0.05 * t, "%s: runs differ by %s of %s: names do not line up" % (tag, d, t))


def check_heaptrack(tag, ht, ht2):
    p = run(["heaptrack_print", "-f", ht])
    check(p.returncode == 0, "%s: heaptrack_print: %s" % (tag, p.stderr))
    check(re.search(r"^Cache:put\n  at cache_leak\.lua:14\n  in cache_leak\.lua$", p.stdout, re.M),
          "%s: heaptrack_print does not show Cache:put at cache_leak.lua:14" % tag)
    check(not ADDR.search(p.stdout), "%s: address in heaptrack_print output" % tag)
    d = run(["heaptrack_print", "-f", ht2, "-d", ht])
    calls = re.search(r"calls to allocation functions: (-?\d+)", d.stdout)
    base = re.search(r"calls to allocation functions: (\d+)", p.stdout)
    if check(calls and base, "%s: heaptrack_print -d output" % tag):
        check(abs(int(calls.group(1))) <= 0.05 * int(base.group(1)),
              "%s: heaptrack -d: %s calls differ" % (tag, calls.group(1)))


def check_symtab(path):
    """`ljm record` names the C functions a Lua program can run in (LuaJIT's,
    libc's), not those of the libraries the CLI links for its exporters
    (libxml2 and the ICU and libstdc++ it loads): luajit has none of them."""
    syms = ljmread.Symbols()
    ljmread.read_symtab(ljmread.Reader(open(path, "rb").read()), syms)
    names = set(syms.cnames.values())
    check({"lua_createtable", "printf"} <= names,
          "symtab: LuaJIT's and libc's C functions (%d names)" % len(names))
    cli = sorted(n for n in names if n.startswith(("xml", "_ZNSt")) or re.match(r"u_\w+_\d+$", n))
    check(not cli, "symtab: the CLI's own libraries: %r" % cli[:5])


def main():
    tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    rec = os.path.join(tmp, "rec")
    os.makedirs(rec)
    shutil.copy(SCRIPT, rec)
    for r in ("run1", "run2"):
        p = run([LJM, "record", "-o", r + ".ljm", "cache_leak.lua"], cwd=rec)
        check(p.returncode == 0, "record %s: %s" % (r, p.stderr))
    check_symtab(os.path.join(rec, "run1.ljm"))

    # 1. Source beside the profile (current directory).
    for fmt in ("json", "folded", "svg", "md", "pb.gz", "heaptrack.zst"):
        for r in ("run1", "run2"):
            convert(r + ".ljm", "%s.%s" % (r, fmt), rec)
    check_json_named("cwd", os.path.join(rec, "run1.json"))
    check_folded("cwd", os.path.join(rec, "run1.folded"))
    check_svg_md("cwd", os.path.join(rec, "run1.svg"), os.path.join(rec, "run1.md"))
    check_pprof("cwd", "run1.pb.gz", "run2.pb.gz", rec)
    check_heaptrack("cwd", os.path.join(rec, "run1.heaptrack.zst"), os.path.join(rec, "run2.heaptrack.zst"))

    # 2. Elsewhere, the profile beside its source: named alike.
    away = os.path.join(tmp, "away")
    os.makedirs(away)
    check({(s["func"], s["line"]) for s in sites(convert(os.path.join(rec, "run1.ljm"),
                                                          "beside.json", away))} ==
          {(s["func"], s["line"]) for s in sites(os.path.join(rec, "run1.json"))},
          "converted elsewhere, the source beside the profile: the same names")

    # 3. Elsewhere, without the source: file and line, never file:0.
    src = os.path.join(away, "run1.ljm")
    shutil.copy(os.path.join(rec, "run1.ljm"), src)
    ss = sites(convert(src, "nosrc.json", away))
    lua = [s for s in ss if s["kind"] == "lua"]
    check(lua and all(s["func_from"] in ("unknown", "main") for s in lua), "no source: func_from")
    check(any(s["func"] == "function <cache_leak.lua:13>" for s in lua),
          "no source: Cache:put as function <cache_leak.lua:13>: %r" % sorted({s["func"] for s in lua}))
    check_folded_nosrc = read(convert(src, "nosrc.folded", away))
    check("cache_leak.lua;function <cache_leak.lua:13>;cache_leak.lua:14 " in check_folded_nosrc,
          "no source: folded path of Cache:put")

    # 4. --source-dir, also for a chunk recorded with an absolute path
    #    from another tree (its leading directories are dropped one by one).
    check_json_named("--source-dir", convert(src, "srcdir.json", away, ["--source-dir", rec]))
    absrun = os.path.join(tmp, "abs")
    os.makedirs(absrun)
    shutil.copy(SCRIPT, absrun)
    p = run([LJM, "record", "-o", "abs.ljm", os.path.join(absrun, "cache_leak.lua")], cwd=absrun)
    check(p.returncode == 0, "record with an absolute path: %s" % p.stderr)
    moved = os.path.join(tmp, "checkout", "lib")
    os.makedirs(moved)
    shutil.copy(SCRIPT, moved)
    shutil.rmtree(absrun + "_gone", ignore_errors=True)
    os.rename(absrun, absrun + "_gone")  # the recorded path no longer exists
    check_json_named("absolute path, --source-dir",
                     convert(os.path.join(absrun + "_gone", "abs.ljm"), "abs.json", away,
                             ["--source-dir", moved]))
    return check.done(minimum=40)


if __name__ == "__main__":
    sys.exit(main())
