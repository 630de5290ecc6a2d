#!/usr/bin/env python3
"""heap_deep_test.py -- ljm heap on a real snapshot of a 300 000-element
linked list, and on snapshots with impossible sizes.

--path-to must not recurse once per path step (a stack overflow at the
default 8 MB stack on this list): it prints the one path, elided in the
middle, its shown and counted steps adding up. Sizes that would sum past
2^64 (and wrap: "_G retains 0") are refused at the size's byte (exit 1,
one line) and what came before it is reported exactly.
usage: heap_deep_test.py LJM FUZZ_INPUT"""
import json
import os
import re
import resource
import subprocess
import sys
import tempfile

from checks import Checks
from ljmwrite import uleb

N = 300000
ljm, fuzz_input = sys.argv[1], sys.argv[2]
chk = Checks("heap_deep")
work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))


def stack_8mb():
    """The default stack, whatever the test runner was given."""
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    lim = 8 << 20 if hard == resource.RLIM_INFINITY else min(8 << 20, hard)
    resource.setrlimit(resource.RLIMIT_STACK, (lim, hard))


def heap(*args):
    return subprocess.run([ljm, "heap"] + list(args), capture_output=True, text=True,
                          preexec_fn=stack_8mb, timeout=600)


# -- A real recording: the tail of a 300 000-element list -----------------------
script = os.path.join(work, "deep.lua")
with open(script, "w") as f:
    # The tail's string is made at run time: a constant would be reached
    # through a prototype, by a shorter path.
    f.write('head = {v = "list tail " .. #arg}\n'
            "for i = 2, %d do head = {next = head, v = i} end\n" % N)
snap = os.path.join(work, "deep.ljh")
r = subprocess.run([ljm, "record", "-o", os.path.join(work, "deep.ljm"), "--snapshot-at-exit",
                    snap, script], capture_output=True, text=True, timeout=600)
chk(r.returncode == 0 and os.path.exists(snap), "ljm record: %d %s" % (r.returncode, r.stderr))

# _G.head, then N - 1 times .next, then .v: the middle elided and counted.
PATH = re.compile(r"^_G\.head((?:\.next)*)<\.\.\. (\d+) steps \.\.\.>((?:\.next)*)\.v$")


def steps(path):
    """The .next steps of a path to the tail, shown and elided, or None."""
    m = PATH.match(path)
    if not m:
        return None
    return m.group(1).count(".next") + int(m.group(2)) + m.group(3).count(".next")


p = heap("--path-to", "^list tail [0-9]+$", snap)
chk(p.returncode == 0 and not p.stderr, "--path-to: exit %d (-11: stack overflow) %s"
    % (p.returncode, p.stderr[-300:]))
lines = p.stdout.splitlines()
chk(len(lines) == 2 and lines[0].startswith("string list tail 0 ("),
    "--path-to: the tail and one path: %r" % [x[:120] for x in lines[:4]])
path = lines[1].strip() if len(lines) > 1 else ""
chk(steps(path) == N - 1 and len(path) < 4096,
    "--path-to: %s steps (want %d) in %d bytes: %s...%s" % (steps(path), N - 1, len(path),
                                                             path[:60], path[-60:]))

p = heap("--json", "--path-to", "^list tail [0-9]+$", snap)
chk(p.returncode == 0, "--path-to --json: exit %d" % p.returncode)
try:
    j = json.loads(p.stdout)
    m = j["matches"]
    chk(j["matched"] == 1 and len(m) == 1 and len(m[0]["paths"]) == 1 and
        m[0]["references"] == 1 and m[0]["paths"][0] == path,
        "--path-to --json: one match, the same path")
except (ValueError, KeyError, IndexError) as e:
    chk(False, "--path-to --json: %s" % e)

p = heap("--json", "--top", "3", snap)
chk(p.returncode == 0, "summary: exit %d" % p.returncode)
try:
    ret = {x["path"]: x["retained_bytes"] for x in json.loads(p.stdout)["retainers"]}
    chk(set(ret) == {"_G", "_G.head", "_G.head.next"} and ret["_G.head"] > N * 32,
        "summary: the list's head retains it all: %r" % ret)
except (ValueError, KeyError) as e:
    chk(False, "summary: %s" % e)

# The list as a flame graph: one frame per level down to 64, then one
# "(deeper)" frame; the bytes all there (it was a line of 256 frames per
# element, 300 000 of them).
total = json.loads(p.stdout)["bytes"] if p.returncode == 0 else None
folded = os.path.join(work, "deep.folded")
c = subprocess.run([ljm, "convert", "-o", folded, snap], capture_output=True, text=True,
                   preexec_fn=stack_8mb, timeout=600)
chk(c.returncode == 0, "convert to folded: %s" % c.stderr)
lines = open(folded).read().splitlines() if c.returncode == 0 else []
depth = max((ln.count(";") + 1 for ln in lines), default=0)
chk(sum(int(ln.rsplit(" ", 1)[1]) for ln in lines) == total and depth <= 66 and
    os.path.getsize(folded) < 1 << 20 and any(ln.rsplit(" ", 1)[0].endswith(";(deeper)") for ln in lines),
    "flame graph of the list: %d lines, %d frames deep at most, %d bytes of output"
    % (len(lines), depth, os.path.getsize(folded) if lines else 0))


# -- Impossible sizes ------------------------------------------------------------
def sized(sizes):
    """root -_G-> 1 -a-> 2 ... of those sizes; the offsets of the sizes."""
    d = bytearray(b"ljh\x01" + uleb(0) + uleb(0))
    d += b"\x01" + uleb(0) + uleb(0) + uleb(0) + uleb(1) + b"\x01" + uleb(16) + uleb(2) + b"_G"
    at = []
    for i, size in enumerate(sizes, 1):
        d += b"\x03" + uleb(16 * i)
        at.append(len(d))
        d += uleb(size) + uleb(0)
        if i < len(sizes):
            d += uleb(1) + b"\x01" + uleb(16 * i + 16) + uleb(1) + b"a"
        else:
            d += uleb(0)
    return bytes(d + b"\x00"), at


# -- Addresses far apart ----------------------------------------------------------
# 200 000 objects 2^40 bytes apart: the address map hashed bits 20.. of a
# product, which such addresses leave zero, so every object probed from one
# slot (quadratic: minutes). Now the whole chain loads within seconds of CPU.
def chained(addrs):
    """root -_G-> addrs[0] -a-> addrs[1] ... (tables of 8 bytes)."""
    d = bytearray(b"ljh\x01" + uleb(0) + uleb(0))
    d += b"\x01" + uleb(0) + uleb(0) + uleb(0) + uleb(1) + b"\x01" + uleb(addrs[0]) + uleb(2) + b"_G"
    for i, a in enumerate(addrs):
        d += b"\x03" + uleb(a) + uleb(8) + uleb(0)
        d += (uleb(1) + b"\x01" + uleb(addrs[i + 1]) + uleb(1) + b"a") if i + 1 < len(addrs) else uleb(0)
    return bytes(d + b"\x00")


far = os.path.join(work, "far.ljh")
with open(far, "wb") as f:
    f.write(chained([(i + 1) << 40 for i in range(200000)]))


def cpu_20s():
    stack_8mb()
    resource.setrlimit(resource.RLIMIT_CPU, (20, 20))


p = subprocess.run([ljm, "heap", far], capture_output=True, text=True, preexec_fn=cpu_20s,
                   timeout=600)
chk(p.returncode == 0 and re.search(r"^\s*1600000\s", p.stdout, re.M) is not None,
    "200 000 objects 2^40 apart: loaded within 20 s of CPU, _G retains 1 600 000 bytes "
    "(exit %d): %s %s" % (p.returncode, p.stderr[-300:], p.stdout[:400]))


# -- Shapes that a careless walk would make quadratic ----------------------------
def snapshot(root, objs):
    """A version 2 snapshot: root edges and objects (type, addr, size, label,
    edges); an edge is (kind, target, what): a name for kind 1, else a number."""
    def s(b):
        b = b.encode() if isinstance(b, str) else b
        return uleb(len(b)) + b

    def edge(kind, target, what):
        return bytes([kind]) + uleb(target) + (s(what) if kind & 0x7F == 1 else uleb(what))
    d = bytearray(b"ljh\x02" + s("review") + uleb(0) + uleb(1) + s("rss") + uleb(1 << 20))
    d += b"\x01" + uleb(0) + uleb(0) + s("") + uleb(len(root)) + b"".join(edge(*e) for e in root)
    for t, a, size, label, edges in objs:
        d += bytes([t]) + uleb(a) + uleb(size) + s(label) + uleb(len(edges)) + b"".join(edge(*e) for e in edges)
    return bytes(d + b"\x00")


def write(name, data):
    path = os.path.join(work, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


# 100 000 references into one object, the worst of its paths through a
# thread's edge with a 10 000-byte name: each comparison of the retainers
# read that name again (16 s for a 7 MB file); now a penalty per reference.
X = 0x60
longname = write("retainers.ljh", snapshot(
    [(1, 0x10, "_G"), (1, 0x20, "main thread"), (1, 0x30, "current thread"), (1, 0x40, "y")],
    [(3, 0x10, 40, "", [(3, X, 1)]), (8, 0x20, 40, "", [(1, X, "A" * 10000)]),
     (8, 0x30, 40, "", [(1, X, "B" * 10000)]), (3, 0x40, 40, "", [(3, 0x50, 1)]),
     (3, 0x50, 40, "", [(3, X, i) for i in range(100000)]), (3, X, 1 << 30, "X", [])]))
p = subprocess.run([ljm, "heap", longname], capture_output=True, text=True, preexec_fn=cpu_20s, timeout=600)
chk(p.returncode == 0 and "(+100000 more references into it)" in p.stdout,
    "100 000 references, long names: listed within 20 s of CPU (exit %d) %s" % (p.returncode, p.stderr[-200:]))

# 2 000 tables sharing a metatable of 100 000 keys: --base named each
# candidate's type by scanning those keys again (29 s); now once per metatable.
mt = write("metatable.ljh", snapshot(
    [(1, 0x10, "_G")],
    [(3, 0x10, 40, "", [(3, 0x1000 + 16 * i, i + 1) for i in range(2000)] + [(3, 0x20, 0)]),
     (3, 0x20, 40, "", [(2, 0x30, 0x40)] * 100000), (2, 0x30, 40, "s", []), (2, 0x40, 40, "__namf", [])] +
    [(3, 0x1000 + 16 * i, 1000000 + i, "", [(1, 0x20, "metatable")]) for i in range(2000)]))
p = subprocess.run([ljm, "heap", "--base", mt, mt], capture_output=True, text=True, preexec_fn=cpu_20s,
                   timeout=600)
chk(p.returncode == 0, "a large shared metatable: --base within 20 s of CPU (exit %d) %s"
    % (p.returncode, p.stderr[-200:]))

# Entries dropped: counted on their container's row (once: a second row of
# the same path was made for them), the largest drops as examples.
def cache(n):
    ks = [(2, 0x1000 + 16 * i, 0x8000 + 16 * i) for i in range(n)]
    objs = [(3, 0x10, 40, "", [(2, 0x20, 0x30)]), (2, 0x30, 32, "cache", []),
            (3, 0x20, 40, "", ks)]
    objs += [(3, 0x1000 + 16 * i, 1000 * (i + 1), "", []) for i in range(n)]
    objs += [(2, 0x8000 + 16 * i, 32, "k%d" % (i + 1), []) for i in range(n)]
    return snapshot([(1, 0x10, "_G")], objs)


old_c, new_c = write("cache_old.ljh", cache(5)), write("cache_new.ljh", cache(0))
p = heap("--json", "--base", old_c, new_c)
try:
    rows = json.loads(p.stdout)["retainers"]
    c = [r for r in rows if r["path"] == "_G.cache"]
    chk(len(c) == 1 and c[0]["entries"] == -5 and
        [e["path"] for e in c[0]["grown"]["examples"]] == ["_G.cache.k5", "_G.cache.k4"] and
        not [r for r in rows if r["path"].startswith("_G.cache.")],
        "dropped entries: one _G.cache row, -5 entries, the two largest drops: %s" % rows)
except (ValueError, KeyError) as e:
    chk(False, "dropped entries: %s %s" % (e, p.stderr))


# Two objects of 2^63: the sum wrapped to 0 and _G "retained 0". The fuzz
# target's regression input is this file.
data, at = sized([1 << 63, 1 << 63])
with open(fuzz_input, "rb") as f:
    chk(f.read() == data, "the fuzz regression input is the 2^63 pair")
p = heap(fuzz_input)
chk(p.returncode == 1 and p.stderr == "%s: byte %d: impossible object size %d (above 2^56 bytes)\n"
    % (fuzz_input, at[0], 1 << 63), "2^63: refused at its byte: %r" % p.stderr)
chk("retains 0" not in p.stdout and not re.search(r"\s0\s+table\s+_G$", p.stdout, re.M),
    "2^63: nothing retains a wrapped 0: %s" % p.stdout)

# Each size allowed, 2^62 + 2^56 together: refused at the 65th object; the 64
# before are reported exactly (_G retains 2^62).
f65 = os.path.join(work, "sum.ljh")
data, at = sized([1 << 56] * 65)
with open(f65, "wb") as f:
    f.write(data)
p = heap("--json", f65)
chk(p.returncode == 1 and p.stderr == "%s: byte %d: object sizes add up to %d, above 2^62: "
    "impossible\n" % (f65, at[64], (1 << 62) + (1 << 56)), "past 2^62: %r" % p.stderr)
try:
    j = json.loads(p.stdout)
    g = [x for x in j["retainers"] if x["path"] == "_G"]
    chk(j["bytes"] == 1 << 62 and g and g[0]["retained_bytes"] == 1 << 62,
        "past 2^62: what came before, exact: %r" % p.stdout[:300])
except (ValueError, KeyError) as e:
    chk(False, "past 2^62: %s" % e)

sys.exit(chk.done())
