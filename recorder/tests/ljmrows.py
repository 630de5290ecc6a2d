"""ljmrows.py -- minimal independent reader of ljm streams for the recorder tests.

Decodes a stream, names locations like the reference parser (ljm-format.md
3.3) and groups events per section by id (3.4). Also parses reference
report text into the same (section, name) -> [counts] shape.
"""
import bisect
import re
import sys

SECTIONS = {1: "ALLOCATIONS", 2: "DEALLOCATIONS", 3: "REALLOCATIONS"}


class Truncated(Exception):
    pass


class Reader:
    def __init__(self, data):
        self.d = data
        self.i = 0

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


def decode(data):
    """Returns (rows, info): rows[(section, name)] = [count per id...]."""
    r = Reader(data)
    lfunc, trace, caddrs, cnames = {}, {}, [], {}
    aliases = {}
    info = {"complete": False, "events": 0, "symtab_events": 0}

    def cadd(addr, name):
        if addr not in cnames:
            bisect.insort(caddrs, addr)
        cnames[addr] = name

    def pname(addr, line):
        if addr == 0:
            return "INTERNAL"
        if addr in lfunc:
            src = lfunc[addr]
            if "\n" in src:
                if src not in aliases:
                    aliases[src] = "function_alias_%d" % (len(aliases) + 1)
                src = aliases[src]
            return "%s:%d" % (src, line)
        k = bisect.bisect_right(caddrs, addr)
        if k:
            a = caddrs[k - 1]
            return "%s:%#x" % (cnames[a], a)
        return "CFUNC %#x" % addr

    def name(addr, line, traceno):
        if traceno:
            n = "TRACE [%d]" % traceno
            if traceno in trace:
                n += " started at " + pname(*trace[traceno])
            return n
        return pname(addr, line)

    groups = {}
    if bytes(data[:4]) != b"ljs\x03":
        raise ValueError("bad ljs prologue")
    r.i = 7
    try:
        while True:
            h = r.byte()
            if h & 0x80:
                break
            t = h & 3
            if t == 0:
                a = r.uleb(); lfunc[a] = r.str(); r.uleb()
            elif t == 1:
                a = r.uleb(); cadd(a, r.str())
            elif t == 2:
                n = r.uleb(); p = r.uleb(); ln = r.uleb(); trace[n] = (p, ln)
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
                if src == 0x08:
                    a = r.uleb(); lfunc[a] = r.str(); r.uleb()
                elif src == 0x0C:
                    a = r.uleb(); cadd(a, r.str())
                elif src == 0x10:
                    n = r.uleb(); p = r.uleb(); ln = r.uleb(); trace[n] = (p, ln)
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
