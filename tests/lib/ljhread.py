"""ljhread.py -- an independent reader of heap snapshots (decoder/ljh_decoder.h)
for the tests: the objects by address, with their edges. Bytes, numbers and
strings are read by ljmread.Reader."""
import ljmread

TYPES = {1: "root", 2: "string", 3: "table", 4: "function", 5: "C function",
         6: "prototype", 7: "upvalue", 8: "thread", 9: "userdata", 10: "cdata",
         11: "trace", 12: "VM internal"}
NAME, STRKEY, INDEX, OBJKEY, KEY = 1, 2, 3, 4, 5


class Obj:
    def __init__(self, type_, addr, size, label, edges):
        self.type, self.addr, self.size, self.label, self.edges = type_, addr, size, label, edges


def read(data):
    """(build, gctotal, {addr: Obj}); edges are (kind, weak, target, what)."""
    build, total, _, objs = read_all(data)
    return build, total, objs


class _Reader(ljmread.Reader):
    """ljmread's bytes, numbers and strings; numbers kept whole (a snapshot's
    sizes are not cut to 64 bits here)."""

    def wide(self, v, start):
        return v


def header(data):
    """(build, gctotal, {figure name: bytes}, r): the header, r (a reader)
    left at the first object. Version 2 adds the process's figures (rss,
    malloc_in_use, malloc_held) after gctotal; r.v1_end is where a version 1
    header would have ended."""
    assert data[:3] == b"ljh" and data[3] in (1, 2), "magic"
    r = _Reader(data, 4)
    build, total = r.str(), r.uleb()
    r.v1_end = r.i
    figures = {}
    if data[3] >= 2:
        for _ in range(r.uleb()):
            name = r.str()
            figures[name] = r.uleb()
    return build, total, figures, r


def as_version1(data):
    """A version 2 snapshot written as version 1: the same objects, no
    process figures."""
    _, _, _, r = header(data)
    return b"ljh\x01" + data[4:r.v1_end] + data[r.i:]


def read_all(data):
    """(build, gctotal, {figure name: bytes}, {addr: Obj}): version 2 adds the
    process's figures (rss, malloc_in_use, malloc_held) to the header."""
    build, total, figures, r = header(data)
    objs = {}
    while True:
        t = r.byte()
        if t == 0:
            break
        addr, size, label, n = r.uleb(), r.uleb(), r.str(), r.uleb()
        edges = []
        for _ in range(n):
            k = r.byte()
            kind, weak, target = k & 0x7F, bool(k & 0x80), r.uleb()
            what = r.str() if kind == NAME else None if kind == KEY else r.uleb()
            edges.append((kind, weak, target, what))
        objs[addr] = Obj(TYPES[t], addr, size, label, edges)
    assert r.i == len(data), "bytes after the end"
    return build, total, figures, objs
