"""ljmrows.py -- minimal independent reader of ljm streams for the recorder tests.

Decodes a stream, names locations like the reference parser (ljm-format.md
3.3) and groups events per section by id (3.4). Also parses reference
report text into the same (section, name) -> [counts] shape. Reader,
Symbols and read_symtab are shared with ljmext.py (extended streams).
"""
import bisect
import re
import sys

SECTIONS = {1: "ALLOCATIONS", 2: "DEALLOCATIONS", 3: "REALLOCATIONS"}


class Truncated(Exception):
    pass


class Reader:
    """Bytes, ULEB128 numbers and strings of a stream from offset i;
    Truncated at its end."""

    def __init__(self, data, i=0):
        self.d = data
        self.i = i

    def byte(self):
        if self.i >= len(self.d):
            raise Truncated()
        b = self.d[self.i]
        self.i += 1
        return b

    def uleb(self):
        v, s = 0, 0
        while True:
            b = self.byte()
            v |= (b & 0x7F) << s
            s += 7
            if not b & 0x80:
                return v & 0xFFFFFFFFFFFFFFFF

    def str(self):
        n = self.uleb()
        if self.i + n > len(self.d):
            raise Truncated()
        s = self.d[self.i:self.i + n]
        self.i += n
        return s.decode("latin-1")


# Symbol entry types, and the type of a symtab event by its source bits.
SYM_LUA, SYM_C, SYM_TRACE = 0, 1, 2
SYM_OF_SOURCE = {0x08: SYM_LUA, 0x0C: SYM_C, 0x10: SYM_TRACE}


class Symbols:
    """What a stream announced: Lua prototypes (address -> chunk name), C
    symbols (names by address, addresses sorted) and traces (number ->
    (prototype, line)), from its symbol table and symtab events."""

    def __init__(self):
        self.lfunc, self.trace, self.caddrs, self.cnames = {}, {}, [], {}

    def read(self, r, kind):
        """Reads an entry of type kind (SYM_*) from r and keeps it."""
        if kind == SYM_LUA:
            a = r.uleb(); self.lfunc[a] = r.str(); r.uleb()
        elif kind == SYM_C:
            a = r.uleb(); name = r.str()
            if a not in self.cnames:
                bisect.insort(self.caddrs, a)
            self.cnames[a] = name
        elif kind == SYM_TRACE:
            n = r.uleb(); p = r.uleb(); ln = r.uleb(); self.trace[n] = (p, ln)
        else:
            raise ValueError("byte %d: bad symbol entry" % (r.i - 1))

    def c_below(self, addr):
        """(address, name) of the nearest C symbol at or below addr, or None."""
        k = bisect.bisect_right(self.caddrs, addr)
        return (self.caddrs[k - 1], self.cnames[self.caddrs[k - 1]]) if k else None


def read_symtab(r, syms):
    """Reads the symbol table (the ljs prologue at r.i, then its entries)
    into syms; r is left at the ljm prologue."""
    if bytes(r.d[r.i:r.i + 4]) != b"ljs\x03":
        raise ValueError("bad ljs prologue")
    r.i += 7
    while True:
        h = r.byte()
        if h & 0x80:
            return
        syms.read(r, h & 3)


def decode(data):
    """Returns (rows, info): rows[(section, name)] = [count per id...]."""
    r = Reader(data)
    syms = Symbols()
    aliases = {}
    info = {"complete": False, "events": 0, "symtab_events": 0}

    def pname(addr, line):
        if addr == 0:
            return "INTERNAL"
        if addr in syms.lfunc:
            src = syms.lfunc[addr]
            if "\n" in src:
                if src not in aliases:
                    aliases[src] = "function_alias_%d" % (len(aliases) + 1)
                src = aliases[src]
            return "%s:%d" % (src, line)
        c = syms.c_below(addr)
        if c:
            return "%s:%#x" % (c[1], c[0])
        return "CFUNC %#x" % addr

    def name(addr, line, traceno):
        if traceno:
            n = "TRACE [%d]" % traceno
            if traceno in syms.trace:
                n += " started at " + pname(*syms.trace[traceno])
            return n
        return pname(addr, line)

    groups = {}
    try:
        read_symtab(r, syms)
        if bytes(data[r.i:r.i + 4]) != b"ljm\x03":
            raise ValueError("bad ljm prologue")
        r.i += 7
        while True:
            h = r.byte()
            if h == 0x80:
                info["complete"] = True
                break
            if h > 0x13:
                raise ValueError("bad header %#x at %d" % (h, r.i - 1))
            ev, src = h & 3, h & 0x1C
            if ev == 0:
                info["symtab_events"] += 1
                syms.read(r, SYM_OF_SOURCE.get(src))
                continue
            addr = line = traceno = 0
            if src == 0x08:
                addr = r.uleb(); line = r.uleb()
            elif src == 0x0C:
                addr = r.uleb()
            elif src == 0x10:
                traceno = r.uleb()
            elif src != 0x04:
                raise ValueError("unknown asource 0")
            if ev in (2, 3):
                r.uleb(); r.uleb()
            if ev in (1, 3):
                r.uleb(); r.uleb()
            info["events"] += 1
            key = (ev, addr, line, traceno)
            g = groups.get(key)
            if g is None:
                groups[key] = [name(addr, line, traceno), 1]
            else:
                g[1] += 1
    except Truncated:
        pass
    rows = {}
    for (ev, _, _, _), (n, c) in groups.items():
        rows.setdefault((SECTIONS[ev], n), []).append(c)
    return rows, info


ROW = re.compile(r"^(.*): (\d+) events\t\+\d+B\t-\d+B$")


def parse_report(text):
    rows, sec = {}, None
    for line in text.splitlines():
        if line in ("ALLOCATIONS", "REALLOCATIONS", "DEALLOCATIONS"):
            sec = line
            continue
        if line.startswith("HEAP SUMMARY"):
            sec = None
            continue
        m = ROW.match(line)
        if sec and m:
            rows.setdefault((sec, m.group(1)), []).append(int(m.group(2)))
    return rows


if __name__ == "__main__":
    rows, info = decode(open(sys.argv[1], "rb").read())
    for (sec, n), cs in sorted(rows.items()):
        print("%s\t%s\t%s" % (sec, n, cs))
    print(info)
