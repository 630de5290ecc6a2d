#!/usr/bin/env python3
"""real_programs_test.py -- programs nobody here wrote, recorded under the
system's `luajit`, read right (Debian's lua-check, lua-penlight, lua-cjson,
lua-lpeg; scripts/setup-tests.d/lua-programs.sh installs them).

  * One frame per function, named where it is defined: luacheck linting
    penlight's sources with call stacks. Every function whose definition
    line says its name (`local function f(`, `function M.f(`) shows that
    name, checked against the source file itself; no two functions share a
    name; the names are the same converted from another directory, and the
    same in a standard recording named from the sources.
  * Traces named after where they start: luacheck with the JIT on; every
    trace row of `go tool pprof -top` reads `TRACE [n] file:line`, and that
    line is the start its JSON site gives.
  * Big views stay usable: the luacheck recording's SVG at most 5 MB, its
    narrow frames drawn in their callers (the subtitle says so).
  * A heap snapshot of luacheck with the JIT on: what the JIT holds under
    one root frame ("JIT compiler": its traces in one frame), no trace
    number at the root; every header says it is a snapshot and what the
    value is; the recorder's own buffers apart from the program's C memory;
    DevTools' code objects of bytecode built-ins named "string.len".
  * C modules required after the recording started are named: lua-cjson's
    and lua-lpeg's functions in exact, stacked and sampled recordings
    (`cjson.decode`, `lpeg.match`), never `cjson.so+0x...`.

usage: real_programs_test.py LJM LUACHECK_RUN CJSON_LOOP LPEG_WORDS
"""
import gzip
import json
import os
import re
import shutil
import sys
import tempfile

import testlib
from checks import Checks

check = Checks("real_programs_test")
LJM = os.path.abspath(sys.argv[1])
LUACHECK, CJSON, LPEG = (os.path.abspath(p) for p in sys.argv[2:5])
PL = "/usr/share/lua/5.1/pl"  # penlight's sources: luacheck's input

# A definition line that names its function, as Lua spells it.
DEF = re.compile(r"^\s*(?:local\s+)?function\s+([A-Za-z_][\w.]*(?::[A-Za-z_]\w*)?)\s*\(\s*(self\b)?")


def defined_name(m):
    """The name a definition line gives: `function M.f(self` is a method,
    M:f, as the bytecode (the same as `function M:f(`) names it."""
    name = m.group(1)
    if m.group(2) and ":" not in name and "." in name:
        a, _, b = name.rpartition(".")
        name = a + ":" + b
    return name


def run(cmd, cwd, **kw):
    return testlib.run(cmd, cwd=cwd, timeout=600, **kw)


def record(work, script, out, *opts, args=()):
    shutil.copy(script, work)
    p = run([LJM, "record", *opts, "-o", out, os.path.basename(script), *args], work)
    check(p.returncode == 0, "record %s %s: exit %d %s" % (" ".join(opts), script,
                                                          p.returncode, p.stderr[-500:]))
    return os.path.join(work, out)


def sites(prof, cwd):
    p = run([LJM, "convert", "-q", "-f", "json", "-o", "-", prof], cwd)
    check(p.returncode == 0, "json of %s: %s" % (prof, p.stderr))
    return json.loads(p.stdout)["sites"] if p.returncode == 0 else []


def functions(doc_sites):
    """(file, definition line) -> the name of each Lua function (not a main
    chunk or built-in)."""
    out = {}
    for s in doc_sites:
        if s["kind"] == "lua" and s["func_from"] not in ("main", "builtin"):
            out.setdefault((s["file"], s["func_line"]), set()).add(s["func"])
    return out


def source_line(path, n):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for i, line in enumerate(f, 1):
                if i == n:
                    return line
    except OSError:
        return None
    return None


def check_frames(work):
    prof = record(work, LUACHECK, "lc_stacks.ljm", "-joff", "--stacks")
    fns = functions(sites(prof, work))
    check(len(fns) > 150, "luacheck: %d functions, want hundreds" % len(fns))
    # Each function one name; no name shared by two functions.
    many = {k: v for k, v in fns.items() if len(v) != 1}
    check(not many, "luacheck: functions with more than one name: %r" % list(many.items())[:5])
    by_name = {}
    for (file, line), names in fns.items():
        for n in names:
            by_name.setdefault((os.path.basename(file), n), []).append((file, line))
    shared = {k: v for k, v in by_name.items() if len(v) > 1}
    check(not shared, "luacheck: names shared by two functions: %r" % list(shared.items())[:5])
    # luacheck and penlight define no two functions of one name in files of
    # one name: no name needs its place added.
    told = sorted(n for names in fns.values() for n in names
                  if " <" in n and not n.startswith("function <"))
    check(not told, "luacheck: names told apart by their place: %r" % told[:5])
    # The name is the one the definition line gives, read from the file.
    checked, wrong = 0, []
    for (file, line), names in sorted(fns.items()):
        text = source_line(file, line) if file.startswith("/") else None
        m = DEF.match(text or "")
        if not m:
            continue
        checked += 1
        name = next(iter(names))
        if name != defined_name(m):
            wrong.append((file, line, name, defined_name(m)))
    check(checked > 100 and not wrong, "luacheck: %d names checked against their definition "
          "lines, wrong: %r" % (checked, wrong[:5]))
    # The two callbacks of resolve_locals.lua that the caller's variable
    # ('callback') used to merge are two frames under their own names.
    rl = {n for (f, _), names in fns.items() if f.endswith("stages/resolve_locals.lua")
          for n in names}
    check({"main_assignment_propagation_callback", "closure_creation_propagation_callback"} <= rl
          and "callback" not in rl, "resolve_locals.lua: both callbacks by name: %r" % sorted(rl))
    # Folded frames carry file names, not paths.
    p = run([LJM, "convert", "-q", "-f", "folded", "-o", "-", prof], work)
    frames = {f for line in p.stdout.splitlines() for f in line.rpartition(" ")[0].split(";")}
    check(any(f == "stage.run (resolve_locals.lua)" for f in frames) and
          not any("/usr/share/lua" in f for f in frames),
          "folded: frames name files, not paths: %r" % sorted(frames)[:5])
    # Converted elsewhere (no source at hand for relative names): the same.
    away = tempfile.mkdtemp(dir=work)
    check(functions(sites(prof, away)) == fns, "luacheck: names converted from another "
          "directory differ")
    # A standard recording of the same run names the same functions alike.
    std = functions(sites(record(work, LUACHECK, "lc_std.ljm", "-joff"), work))
    both = set(std) & set(fns)
    diff = [(k, std[k], fns[k]) for k in both if std[k] != fns[k] and
            not any(n.startswith("function <") for n in std[k])]
    check(len(both) > 100 and not diff, "standard vs stacked: %d functions in both, named "
          "otherwise: %r" % (len(both), diff[:5]))


def check_big_svg(work):
    prof = os.path.join(work, "lc_stacks.ljm")
    svg = prof + ".svg"
    p = run([LJM, "convert", "-q", "-o", svg, prof], work)
    data = open(svg, "rb").read() if p.returncode == 0 else b""
    m = re.search(rb'id="subtitle"[^>]*>[^<]*; ([0-9,]+) frames narrower than 0\.1 px', data)
    check(0 < len(data) <= 5 << 20 and m, "luacheck SVG: %d bytes, subtitle %r"
          % (len(data), m.group(0)[-80:] if m else None))


def check_snapshot(work):
    shutil.copy(LUACHECK, work)
    snap = os.path.join(work, "lc.ljh")
    p = run([LJM, "record", "-o", "/dev/null", "--snapshot-at-exit", snap,
             os.path.basename(LUACHECK)], work)
    check(p.returncode == 0, "snapshot of luacheck: %s" % p.stderr[-300:])
    p = run([LJM, "convert", "-q", "-f", "folded", "-o", "-", snap], work)
    roots = {}
    for line in p.stdout.splitlines():
        stack, _, v = line.rpartition(" ")
        roots.setdefault(stack.split(";")[0], 0)
        roots[stack.split(";")[0]] += int(v)
        if stack.startswith("JIT compiler;"):
            roots.setdefault(stack.split(";")[1], 0)
    check("JIT compiler" in roots and "traces" in roots and
          not any(r.startswith("TRACE [") for r in roots),
          "snapshot folded: the JIT's objects under one root frame, no trace at the root: %r"
          % sorted(roots, key=lambda r: -roots.get(r, 0))[:8])
    p = run([LJM, "convert", "-q", "-f", "svg", "-o", "-", snap], work)
    check("LuaJIT heap snapshot flame graph: bytes retained at the snapshot" in p.stdout,
          "snapshot SVG title: %r" % re.findall(r'id="title"[^<]*', p.stdout)[:1])
    # DevTools' code objects: built-ins in bytecode as their library names them.
    p = run([LJM, "convert", "-q", "-f", "heapsnapshot", "-o", "-", snap], work)
    strings = json.loads(p.stdout)["strings"] if p.returncode == 0 else []
    raw = [x for x in strings if re.match(r"^\w+:-1$", x)]
    check(not raw and {"string.len", "table.remove", "table.move"} <= set(strings),
          "heapsnapshot: built-ins by their library names (raw %r)" % raw[:5])
    # The recorder's own buffers apart, not in the program's C memory.
    p = run([LJM, "heap", snap], work)
    own = re.search(r"^recorder: (\d+) bytes of its own", p.stdout, re.M)
    mal = re.search(r"glibc malloc (\d+) in use", p.stdout)
    # (Under ASan, whose allocator replaces glibc's, malloc's figures are unknown.)
    check("glibc malloc unknown" in p.stdout or
          (own and int(own.group(1)) >= 8 << 20 and mal and int(mal.group(1)) < 4 << 20),
          "ljm heap: the recorder's buffers apart from the program's malloc: %r"
          % p.stdout[:600])
    p = run([LJM, "convert", "-q", "-f", "json", "-o", "-", snap], work)
    check(p.returncode == 0 and json.loads(p.stdout)["stream"]["snapshot"] is True,
          "snapshot JSON: stream.snapshot")
    ht = snap + ".heaptrack.gz"
    run([LJM, "convert", "-q", "-o", ht, snap], work)
    with gzip.open(ht, "rt", errors="replace") as fh:
        x = [l for l in fh if l.startswith("X ")]
    check(x and "LuaJIT heap snapshot" in x[0] and "in use at the snapshot" in x[0],
          "snapshot heaptrack: its debuggee line says what it is: %r" % x[:1])
    pb = snap + ".pb.gz"
    run([LJM, "convert", "-q", "-o", pb, snap], work)
    p = run(["go", "tool", "pprof", "-top", "-nodecount=3", pb], work)
    check("LuaJIT heap snapshot" in p.stdout and "bytes in use at the snapshot" in p.stdout and
          "Type: inuse_space" in p.stdout, "snapshot pprof header: %r" % p.stdout[:400])


def check_traces(work):
    prof = record(work, LUACHECK, "lc_jit.ljm")
    doc = sites(prof, work)
    traces = [s for s in doc if s["kind"] == "trace"]
    check(len(traces) > 20, "luacheck with the JIT on: %d trace sites" % len(traces))
    bad = []
    for t in traces:
        st = doc[t["trace_start"]] if t["trace_start"] is not None else None
        if st and st["kind"] == "lua" and st["func_from"] != "builtin":
            want = "TRACE [%d] %s:%d" % (t["traceno"], os.path.basename(st["file"]), st["line"])
            if t["func"] != want:
                bad.append((t["func"], want))
    check(not bad, "traces named after their start: %r" % bad[:5])
    pb = prof + ".pb.gz"
    p = run([LJM, "convert", "-q", "-o", pb, prof], work)
    p = run(["go", "tool", "pprof", "-top", "-nodecount=30", pb], work)
    rows = [l for l in p.stdout.splitlines() if "TRACE [" in l]
    check(p.returncode == 0 and rows and all(re.search(r"TRACE \[\d+\] \S+\.lua:\d+$", r)
                                             for r in rows),
          "pprof -top: trace rows say where they start: %r" % rows[:5])


def check_cnames(work):
    for script, want in ((CJSON, "cjson.decode"), (LPEG, "lpeg.match")):
        base = os.path.basename(script)
        for opts in ((), ("--stacks",), ("--sample", "4096")):
            prof = record(work, script, base + "".join(opts) + ".ljm", *opts)
            p = run([LJM, "report", "-q", prof], work)
            rows = [l for l in p.stdout.split("REALLOCATIONS")[0].splitlines() if " events\t" in l]
            most = max(rows, key=lambda r: int(re.search(r"\t\+(\d+)B", r).group(1)), default="")
            unnamed = [r for r in rows if ".so+0x" in r]
            check(most.startswith(want + ":") and not unnamed,
                  "%s %s: most bytes %r, unnamed %r" % (base, " ".join(opts), most, unnamed[:3]))


def main():
    if not os.path.isdir(PL) or not shutil.which("luajit"):
        print("real_programs_test: Debian's lua-penlight and luajit are missing "
              "(scripts/setup.sh --tests installs them)")
        return 1
    work = tempfile.mkdtemp(prefix="real-", dir=os.environ.get("TEST_TMPDIR"))
    check_frames(work)
    check_big_svg(work)
    check_snapshot(work)
    check_traces(work)
    check_cnames(work)
    return check.done(minimum=10)


if __name__ == "__main__":
    sys.exit(main())
