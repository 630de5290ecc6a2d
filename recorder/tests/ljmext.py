"""ljmext.py -- independent reader and checker of extended ljm streams
(decoder/EXTENSION.md), for the recorder tests.

parse(data) decodes a standard or extended stream and checks every rule
of the extension it can see from the bytes alone; Stream.problems lists
what broke them. downgrade(data) drops the extension items and zeroes the
flags byte, as `ljm convert -f ljm` does.

Frames are labelled for assertions:
  "chunk:line"  a Lua function at a line (chunk as in the symbol table)
  "C:name"      a C function or built-in, named like C locations
  "TRACE n"     a running trace
  "CORO", "TAIL", "TRUNC"  boundary, tail call, frames left out

The bytes and the symbol table are read as in ljmrows.py.
"""
from ljmrows import SYM_OF_SOURCE, Reader, Symbols, Truncated, read_symtab

STACKS, TIME = 0x01, 0x02


class Event:
    __slots__ = ("ev", "name", "stack", "us", "off", "size", "osize")


class Stream:
    def __init__(self):
        self.flags = 0
        self.complete = False
        self.problems = []
        self.nodes = {}        # id -> (parent, label)
        self.events = []       # Event
        self.selections = []   # (offset, node)
        self.marks = []        # (offset, usec, events so far)
        self.rss = []          # (offset, bytes, last mark usec)
        self.ev_start = 0      # offset of the event section

    def chain(self, node):
        """Labels of a stack, innermost first."""
        out = []
        seen = 0
        while node:
            parent, label = self.nodes[node]
            out.append(label)
            node = parent
            seen += 1
            if seen > 1000000:
                raise ValueError("node cycle")
        return out

    def chains(self, section=None):
        """{tuple(labels innermost first): event count}."""
        cnt = {}
        for e in self.events:
            if section is not None and e.ev != section:
                continue
            key = tuple(self.chain(e.stack)) if e.stack else ()
            cnt[key] = cnt.get(key, 0) + 1
        return cnt


def parse(data):
    st = Stream()
    r = Reader(data)
    syms = Symbols()
    bad = st.problems.append

    def cname(addr):
        c = syms.c_below(addr)
        return c[1] if c else None

    def lname(addr, line):
        src = syms.lfunc.get(addr)
        return None if src is None else "%s:%d" % (src, line)

    try:
        read_symtab(r, syms)
        st.ev_start = r.i
        if bytes(data[r.i:r.i + 3]) != b"ljm" or data[r.i + 3] != 3:
            raise ValueError("bad ljm prologue")
        st.flags = data[r.i + 4]
        if st.flags & ~(STACKS | TIME):
            bad("unknown flags %#x" % st.flags)
        if data[r.i + 5] or data[r.i + 6]:
            bad("bytes 5, 6 of the prologue not 0")
        r.i += 7
        sel = None          # None: no selection yet
        last_us = None
        nevents = 0
        while True:
            off = r.i
            h = r.byte()
            if h == 0x80:
                st.complete = True
                break
            if h == 0x20:
                if not st.flags & STACKS:
                    bad("byte %d: node without STACKS" % off)
                parent = r.uleb()
                kind = r.byte()
                nid = len(st.nodes) + 1
                if parent and parent not in st.nodes:
                    bad("byte %d: node %d before its parent %d" % (off, nid, parent))
                if kind == 1:
                    a = r.uleb(); ln = r.uleb()
                    label = lname(a, ln)
                    if label is None:
                        bad("byte %d: node %d: prototype %#x not announced" % (off, nid, a))
                        label = "?%#x:%d" % (a, ln)
                elif kind == 2:
                    a = r.uleb()
                    n = cname(a)
                    if n is None:
                        bad("byte %d: node %d: C address %#x has no symbol" % (off, nid, a))
                    label = "C:%s" % n
                elif kind == 3:
                    n = r.uleb()
                    if n not in syms.trace:
                        bad("byte %d: node %d: trace %d not announced" % (off, nid, n))
                    label = "TRACE %d" % n
                elif kind in (4, 5, 6):
                    label = {4: "CORO", 5: "TAIL", 6: "TRUNC"}[kind]
                else:
                    raise ValueError("byte %d: unknown frame kind %#x" % (off, kind))
                st.nodes[nid] = (parent, label)
                continue
            if h == 0x21:
                if not st.flags & STACKS:
                    bad("byte %d: selection without STACKS" % off)
                node = r.uleb()
                if node and node not in st.nodes:
                    bad("byte %d: selection of unknown node %d" % (off, node))
                if node == sel:
                    bad("byte %d: selection of node %d again (no change)" % (off, node))
                sel = node
                st.selections.append((off, node))
                continue
            if h == 0x22:
                if not st.flags & TIME:
                    bad("byte %d: time mark without TIME" % off)
                us = r.uleb()
                if last_us is not None and us < last_us:
                    bad("byte %d: time mark %d after %d" % (off, us, last_us))
                last_us = us
                st.marks.append((off, us, nevents))
                continue
            if h == 0x23:
                if not st.flags & TIME:
                    bad("byte %d: RSS sample without TIME" % off)
                st.rss.append((off, r.uleb(), last_us))
                continue
            if h > 0x13:
                raise ValueError("byte %d: bad header %#x" % (off, h))
            ev, src = h & 3, h & 0x1C
            if ev == 0:
                syms.read(r, SYM_OF_SOURCE.get(src))
                continue
            name = "INTERNAL"
            if src == 0x08:
                a = r.uleb(); ln = r.uleb(); name = lname(a, ln) or "?"
            elif src == 0x0C:
                a = r.uleb(); name = "C:%s" % cname(a)
            elif src == 0x10:
                name = "TRACE %d" % r.uleb()
            elif src != 0x04:
                raise ValueError("byte %d: bad source" % off)
            e = Event()
            e.osize = e.size = 0
            if ev in (2, 3):
                r.uleb(); e.osize = r.uleb()
            if ev in (1, 3):
                r.uleb(); e.size = r.uleb()
            e.ev, e.name, e.off, e.us = ev, name, off, last_us
            e.stack = sel or 0
            if st.flags & STACKS and sel is None:
                bad("byte %d: event before the first selection" % off)
            st.events.append(e)
            nevents += 1
    except Truncated:
        pass
    return st


def downgrade(data):
    """The standard stream of an extended one (EXTENSION.md, Downgrade)."""
    r = Reader(data)
    syms = Symbols()    # entries are read to find where they end
    read_symtab(r, syms)
    out = bytearray(data[:r.i])
    out += b"ljm\x03\x00\x00\x00"
    r.i += 7
    try:
        while True:
            off = r.i
            h = r.byte()
            if h == 0x80:
                out.append(h)
                break
            if h == 0x20:
                r.uleb()
                k = r.byte()
                if k == 1:
                    r.uleb(); r.uleb()
                elif k in (2, 3):
                    r.uleb()
                continue
            if h in (0x21, 0x22, 0x23):
                r.uleb()
                continue
            ev, src = h & 3, h & 0x1C
            if ev == 0:
                syms.read(r, SYM_OF_SOURCE.get(src))
            else:
                if src == 0x08:
                    r.uleb(); r.uleb()
                elif src in (0x0C, 0x10):
                    r.uleb()
                if ev in (2, 3):
                    r.uleb(); r.uleb()
                if ev in (1, 3):
                    r.uleb(); r.uleb()
            out += data[off:r.i]
    except Truncated:
        pass
    return bytes(out)


def check_time(st, min_marks_per_s=50):
    """Problems with the time marks and RSS samples of a finished stream:
    the first mark before any event, marks dense enough while events come
    (consecutive marks with events between them at most 10 ms + slack
    apart in half the cases: a mark comes with the first event after each
    10 ms deadline, so while the process runs the gaps are ~10 ms; the
    median, not a high percentile, because a test machine running other
    tests beside this one leaves the process off the CPU for tens of ms now
    and then (a 99th percentile of 73 ms was seen), which stretches some
    gaps without the recorder missing a deadline; a writer that missed its
    deadlines would stretch them all), RSS plausible."""
    probs = []
    if not st.marks:
        return ["no time marks"]
    if st.marks[0][2] != 0:
        probs.append("events before the first time mark")
    gaps = []
    for (o1, u1, n1), (o2, u2, n2) in zip(st.marks, st.marks[1:]):
        if n2 > n1:
            gaps.append(u2 - u1)
    if gaps:
        gaps.sort()
        p50 = gaps[len(gaps) // 2]
        if len(gaps) >= 20 and p50 > 20000:
            probs.append("median of mark gaps with events %d us" % p50)
    if not st.rss:
        probs.append("no RSS sample")
    for off, b, us in st.rss:
        if not (1 << 20) <= b <= (1 << 40):
            probs.append("byte %d: implausible RSS %d" % (off, b))
    for (o1, b1, u1), (o2, b2, u2) in zip(st.rss, st.rss[1:]):
        if u1 is not None and u2 is not None and u2 - u1 < 90000:
            probs.append("RSS samples %d us apart" % (u2 - u1))
            break
    return probs
