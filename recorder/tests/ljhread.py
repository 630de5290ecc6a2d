"""ljhread.py -- an independent reader of heap snapshots (decoder/ljh_decoder.h)
for the recorder's tests: the objects by address, with their edges."""

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


def read_all(data):
    """(build, gctotal, {figure name: bytes}, {addr: Obj}): version 2 adds the
    process's figures (rss, malloc_in_use, malloc_held) to the header."""
    pos = [0]

    def byte():
        b = data[pos[0]]
        pos[0] += 1
        return b

    def uleb():
        v = s = 0
        while True:
            b = byte()
            v |= (b & 0x7F) << s
            s += 7
            if not b & 0x80:
                return v

    def string():
        n = uleb()
        s = data[pos[0]:pos[0] + n]
        pos[0] += n
        return s.decode("latin-1")

    assert data[:3] == b"ljh" and data[3] in (1, 2), "magic"
    pos[0] = 4
    build, total = string(), uleb()
    figures = {}
    if data[3] >= 2:
        for _ in range(uleb()):
            name = string()
            figures[name] = uleb()
    objs = {}
    while True:
        t = byte()
        if t == 0:
            break
        addr, size, label, n = uleb(), uleb(), string(), uleb()
        edges = []
        for _ in range(n):
            k = byte()
            kind, weak, target = k & 0x7F, bool(k & 0x80), uleb()
            what = string() if kind == NAME else None if kind == KEY else uleb()
            edges.append((kind, weak, target, what))
        objs[addr] = Obj(TYPES[t], addr, size, label, edges)
    assert pos[0] == len(data), "bytes after the end"
    return build, total, figures, objs
