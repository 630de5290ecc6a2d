"""Independent parser of the ljs v3 + ljm v3 byte stream (ljm-format.md 1.1-1.4).

Written separately from the C decoder so the generator's test does not trust
the code it benchmarks. Strict: the writer's exact header bytes only, the
epilogue must be the last byte. parse(data) returns (syms, events) where
syms is a list of (kind, fields) and events a list of tuples
(hdr, loc, oaddr, osize, naddr, nsize); iter_events(data, syms) yields the
events one by one (for big streams) and appends to syms. Both raise
ValueError on bad input.
"""


class _Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def byte(self):
        if self.pos >= len(self.data):
            raise ValueError("unexpected end of stream at %d" % self.pos)
        b = self.data[self.pos]
        self.pos += 1
        return b

    def uleb(self):
        value, shift, start = 0, 0, self.pos
        while True:
            b = self.byte()
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
            if shift >= 70:
                raise ValueError("ULEB128 too long at %d" % start)
        if value >= 1 << 64:
            raise ValueError("ULEB128 above 64 bits at %d" % start)
        return value

    def string(self):
        n = self.uleb()
        if self.pos + n > len(self.data):
            raise ValueError("string runs past the end at %d" % self.pos)
        s = self.data[self.pos:self.pos + n]
        self.pos += n
        return bytes(s)

    def prologue(self, magic):
        got = bytes(self.data[self.pos:self.pos + 7])
        if len(got) < 7 or got[:3] != magic or got[3] != 3:
            raise ValueError("bad %s prologue %r" % (magic.decode(), got))
        self.pos += 7


def _sym(r, kind):
    if kind == 0:   # Lua prototype: addr chunk firstline
        return ("lfunc", (r.uleb(), r.string(), r.uleb()))
    if kind == 1:   # C function: addr name
        return ("cfunc", (r.uleb(), r.string()))
    return ("trace", (r.uleb(), r.uleb(), r.uleb()))  # traceno proto line


def _loc(r, src):
    if src == 0x04:
        return None
    if src == 0x08:
        return (r.uleb(), r.uleb())
    return r.uleb()  # C function address or trace number


def iter_events(data, syms):
    r = _Reader(memoryview(data))
    r.prologue(b"ljs")
    while True:
        h = r.byte()
        if h == 0x80:
            break
        if h not in (0x00, 0x01, 0x02):
            raise ValueError("bad symtab header 0x%02x at %d" % (h, r.pos - 1))
        syms.append(_sym(r, h))
    r.prologue(b"ljm")
    sym_event_kind = {0x08: 0, 0x0C: 1, 0x10: 2}
    while True:
        h = r.byte()
        if h == 0x80:
            break
        if h in sym_event_kind:
            syms.append(_sym(r, sym_event_kind[h]))
            continue
        ev, src = h & 3, h & 0x1C
        if ev == 0 or src not in (0x04, 0x08, 0x0C, 0x10) or h > 0x13:
            raise ValueError("bad event header 0x%02x at %d" % (h, r.pos - 1))
        loc = _loc(r, src)
        oaddr = osize = naddr = nsize = 0
        if ev in (2, 3):
            oaddr, osize = r.uleb(), r.uleb()
        if ev in (1, 3):
            naddr, nsize = r.uleb(), r.uleb()
        yield (h, loc, oaddr, osize, naddr, nsize)
    if r.pos != len(data):
        raise ValueError("%d bytes after the epilogue" % (len(data) - r.pos))


def parse(data):
    syms = []
    events = list(iter_events(data, syms))
    return syms, events
