#!/usr/bin/env python3
"""ljmread.py -- the tests' own reader of ljm streams (doc/ljm-format.md and
decoder/EXTENSION.md), independent of the C decoder: it shares no code
with it. One byte-level reader (Reader: bytes, ULEB128 numbers, strings;
read_sym and read_symtab: the symbol table) under four views of a stream:

  rows       decode(data) -> (rows, info): events per (section, name),
             locations named like the reference parser (doc/ljm-format.md)
             and grouped per section by id; parse_report(text): a
             reference report in the same shape. Standard streams.
  extended   parse(data) -> Stream: stack nodes, their function names,
             selections, time marks, RSS samples and events, with every
             rule of the extension that the bytes alone show checked
             (Stream.problems); downgrade(data): the standard stream, as
             `ljm convert -f ljm` writes it; check_time(st): the time marks
             and RSS samples of a finished recording.
  totals     totals(data), load(path): whole-profile figures from a replay
             of the live heap (ljm_model.h), for the exporter tests.
  strict     iter_events(data, syms), parse_strict(data): a standard
             stream exactly as the writer writes it (the bench generator's
             check); ValueError on anything else.

Extension items 0x24 (a stack node's call-site name, flag STACKS), 0x25 (a
prototype's definition name) and 0x26..0x2F (reserved annotations) are
`hdr len:U body`: decode() skips them anywhere; totals() skips them where
the C decoder does (0x24 with STACKS, 0x25..0x2F in any extended stream;
elsewhere "bad event header"); parse() checks the call-site names (a
defined Lua node, right after it, once, `what` 1..6, fields within `len`,
at most 4096 bytes) and keeps them in Stream.names, and keeps definition
names (of an announced prototype) in Stream.defnames; downgrade() drops
them; the strict reader accepts no extension item.

Command line:
  ljmread.py FILE          totals of FILE (gzip or plain) as one JSON object:
                           {"status": "ok"|"truncated"|"error", figures...}
  ljmread.py --rows FILE   decode's rows and info
"""
import bisect
import gzip
import json
import math
import re
import sys

U64 = (1 << 64) - 1

# Event kinds (header & 3) and sources (header & 0x1C).
ALLOC, FREE, REALLOC = 1, 2, 3
SRC_INT, SRC_LUA, SRC_C, SRC_TRACE = 0x04, 0x08, 0x0C, 0x10
SECTIONS = {1: "ALLOCATIONS", 2: "DEALLOCATIONS", 3: "REALLOCATIONS"}

# Extension flags (byte 4 of the event section's prologue).
STACKS, TIME, SAMPLED, TYPES = 0x01, 0x02, 0x04, 0x08

# Allocation types (TYPES streams, item 0x29), by value.
TYPE_NAMES = [None, "internal", "table", "table.array", "table.hash", "string", "function",
              "upvalue", "prototype", "thread", "thread.stack", "userdata", "cdata", "buffer",
              "trace"]

# 0x24 items: what a stack node's function name is.
NAME_KINDS = {1: "global", 2: "local", 3: "method", 4: "field", 5: "upvalue",
              6: "metamethod"}
NAME_ITEM_MAX = 4096   # largest body of a 0x24..0x2F item (LJM_NAME_ITEM_MAX)


def is_annotation(h):
    """0x24 (function name) and 0x25..0x2F (reserved): `h len:U body`."""
    return 0x24 <= h <= 0x2F


# -- Bytes ---------------------------------------------------------------


class Truncated(Exception):
    """The stream ends inside an item."""


class Bad(Exception):
    """totals(): the stream is not a valid profile."""


class Reader:
    """Bytes, ULEB128 numbers and strings of a stream from offset i.

    As decode(), parse() and downgrade() read: Truncated at the end of the
    data, numbers of any length cut to 64 bits, prologues checked for magic
    and version. The readers of totals() and of the strict view differ only
    in the hooks below (what a short stream or a long number raises)."""

    uleb_max = 0   # bytes a number may take (0: no limit)

    def __init__(self, data, i=0):
        self.d = data
        self.i = i

    # Hooks.
    def past_end(self, what):
        """Reading past the end of the data (what: "byte" or "string")."""
        raise Truncated()

    def too_long(self, start):
        """A number at start longer than uleb_max bytes."""
        raise ValueError("ULEB128 at %d longer than %d bytes" % (start, self.uleb_max))

    def wide(self, v, start):
        """A number at start of more than 64 bits."""
        return v & U64

    def prologue(self, magic):
        """Checks the 7-byte prologue of a section (b"ljs", b"ljm") at i."""
        if bytes(self.d[self.i:self.i + 4]) != magic + b"\x03":
            raise ValueError("bad %s prologue" % magic.decode())
        self.i += 7

    def sym_header(self, h):
        """The entry type of symbol table header h; None: the table ends."""
        return None if h & 0x80 else h & 3

    # Reading.
    def byte(self):
        if self.i >= len(self.d):
            self.past_end("byte")
        b = self.d[self.i]
        self.i += 1
        return b

    def uleb(self):
        d, i = self.d, self.i
        n = len(d)
        if i < n and d[i] < 0x80:   # one byte, most numbers
            self.i = i + 1
            return d[i]
        v, s, start = 0, 0, i
        while True:
            if i >= n:
                self.i = i
                self.past_end("byte")
            b = d[i]
            i += 1
            v |= (b & 0x7F) << s
            s += 7
            if not b & 0x80:
                self.i = i
                return v if v <= U64 else self.wide(v, start)
            if s == 7 * self.uleb_max:
                self.i = i
                self.too_long(start)

    def take(self, n):
        """The next n bytes."""
        if self.i + n > len(self.d):
            self.past_end("string")
        s = bytes(self.d[self.i:self.i + n])
        self.i += n
        return s

    def string(self):
        """A length-prefixed string, as bytes."""
        return self.take(self.uleb())

    def str(self):
        """A length-prefixed string, as text (latin-1: every byte kept)."""
        return self.string().decode("latin-1")


class _TotalsReader(Reader):
    """totals(): a number longer than 10 bytes is an error, the symbol
    table's prologue is told apart from a cut one."""

    uleb_max = 10

    def too_long(self, start):
        raise Bad("ULEB128 longer than 10 bytes")

    def prologue(self, magic):   # the symbol table's, at offset 0
        if self.d[0:3] != magic:
            raise Bad("no %s prologue" % magic.decode())
        if len(self.d) < 7:
            raise Truncated()
        if self.d[3] != 3:
            raise Bad("symtab version %d" % self.d[3])
        self.i = 7


class _StrictReader(Reader):
    """The strict view: ValueError for everything, naming the offset."""

    uleb_max = 10

    def past_end(self, what):
        if what == "string":
            raise ValueError("string runs past the end at %d" % self.i)
        raise ValueError("unexpected end of stream at %d" % self.i)

    def too_long(self, start):
        raise ValueError("ULEB128 too long at %d" % start)

    def wide(self, v, start):
        raise ValueError("ULEB128 above 64 bits at %d" % start)

    def prologue(self, magic):
        got = bytes(self.d[self.i:self.i + 7])
        if len(got) < 7 or got[:3] != magic or got[3] != 3:
            raise ValueError("bad %s prologue %r" % (magic.decode(), got))
        self.i += 7

    def sym_header(self, h):
        if h == 0x80:
            return None
        if h not in (0x00, 0x01, 0x02):
            raise ValueError("bad symtab header 0x%02x at %d" % (h, self.i - 1))
        return h


# -- Items ---------------------------------------------------------------

# Symbol entry types, and the type of a symtab event by its source bits.
SYM_LUA, SYM_C, SYM_TRACE = 0, 1, 2
SYM_OF_SOURCE = {0x08: SYM_LUA, 0x0C: SYM_C, 0x10: SYM_TRACE}


def read_sym(r, kind):
    """One symbol entry of type kind (SYM_*), names as bytes:
    ("lfunc", (address, chunk name, first line)), ("cfunc", (address,
    name)) or ("trace", (trace number, prototype, line))."""
    if kind == SYM_LUA:
        return ("lfunc", (r.uleb(), r.string(), r.uleb()))
    if kind == SYM_C:
        return ("cfunc", (r.uleb(), r.string()))
    return ("trace", (r.uleb(), r.uleb(), r.uleb()))


def read_loc(r, src):
    """The location of an event from source src: () internal, (prototype,
    line) Lua, (address,) C, (trace number,) trace."""
    if src == SRC_LUA:
        return (r.uleb(), r.uleb())
    if src == SRC_C or src == SRC_TRACE:
        return (r.uleb(),)
    return ()


def read_sizes(r, ev):
    """(old address, old size, new address, new size) of an event of kind
    ev; None where it has none (an allocation has no old block, a free no
    new one)."""
    oaddr = osize = naddr = nsize = None
    if ev != ALLOC:
        oaddr, osize = r.uleb(), r.uleb()
    if ev != FREE:
        naddr, nsize = r.uleb(), r.uleb()
    return oaddr, osize, naddr, nsize


def frame_fields(r, k):
    """The fields of a stack node's frame of kind k (its byte read):
    (prototype, line) Lua, (address,) C, (trace number,) trace, () for the
    others (unknown kinds included: the caller decides)."""
    if k == 1:
        return (r.uleb(), r.uleb())
    if k in (2, 3):
        return (r.uleb(),)
    return ()


def read_frame(r):
    """The frame of a stack node (0x20, after its parent): (kind, fields)."""
    k = r.byte()
    return k, frame_fields(r, k)


def read_body(r):
    """The body of a 0x24..0x2F item: its length, then that many bytes."""
    return r.take(r.uleb())


def read_name(body):
    """(node, what, name bytes) of a 0x24 item's body; Truncated when node
    or what run past it."""
    b = Reader(body)
    node = b.uleb()
    what = b.uleb()
    return node, what, body[b.i:]


class Symbols:
    """What a stream announced: Lua prototypes (address -> chunk name), C
    symbols (names by address, addresses sorted) and traces (number ->
    (prototype, line)), from its symbol table and symtab events."""

    def __init__(self):
        self.lfunc, self.trace, self.caddrs, self.cnames = {}, {}, [], {}
        self.lfirst = {}  # prototype -> its first line

    def read(self, r, kind):
        """Reads an entry of type kind (SYM_*) from r and keeps it."""
        if kind not in (SYM_LUA, SYM_C, SYM_TRACE):
            raise ValueError("byte %d: bad symbol entry" % (r.i - 1))
        what, f = read_sym(r, kind)
        if what == "lfunc":
            self.lfunc[f[0]] = f[1].decode("latin-1")
            self.lfirst[f[0]] = f[2]
        elif what == "cfunc":
            if f[0] not in self.cnames:
                bisect.insort(self.caddrs, f[0])
            self.cnames[f[0]] = f[1].decode("latin-1")
        else:
            self.trace[f[0]] = (f[1], f[2])

    def c_below(self, addr):
        """(address, name) of the nearest C symbol at or below addr, or None."""
        k = bisect.bisect_right(self.caddrs, addr)
        return (self.caddrs[k - 1], self.cnames[self.caddrs[k - 1]]) if k else None


class _Skipped:
    """totals(): symbol entries read past (type 3 and the sources without
    an entry have no payload)."""

    def read(self, r, kind):
        if kind in (SYM_LUA, SYM_C, SYM_TRACE):
            read_sym(r, kind)


class _Listed:
    """The strict view: symbol entries appended to a list, as read_sym
    returns them."""

    def __init__(self, out):
        self.out = out

    def read(self, r, kind):
        self.out.append(read_sym(r, kind))


def read_symtab(r, syms):
    """Reads the symbol table (the ljs prologue at r.i, then its entries)
    into syms (syms.read(r, type) takes each entry); r is left at the ljm
    prologue."""
    r.prologue(b"ljs")
    while True:
        kind = r.sym_header(r.byte())
        if kind is None:
            return
        syms.read(r, kind)


# -- Rows per (section, name) -------------------------------------------


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
        r.prologue(b"ljm")
        while True:
            h = r.byte()
            if h == 0x80:
                info["complete"] = True
                info["trailing"] = len(data) - r.i  # bytes after the end marker
                break
            if is_annotation(h):
                read_body(r)
                continue
            if h > 0x13:
                raise ValueError("bad header %#x at %d" % (h, r.i - 1))
            ev, src = h & 3, h & 0x1C
            if ev == 0:
                info["symtab_events"] += 1
                syms.read(r, SYM_OF_SOURCE.get(src))
                continue
            if src == 0:
                raise ValueError("unknown asource 0")
            loc = read_loc(r, src)
            addr = line = traceno = 0
            if src == SRC_LUA:
                addr, line = loc
            elif src == SRC_C:
                addr = loc[0]
            elif src == SRC_TRACE:
                traceno = loc[0]
            read_sizes(r, ev)
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
    """rows[(section, name)] = [count per row...] of a reference report."""
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


# -- Extended streams ----------------------------------------------------
#
# Frames are labelled for assertions:
#   "chunk:line"  a Lua function at a line (chunk as in the symbol table)
#   "C:name"      a C function or built-in, named like C locations
#   "TRACE n"     a running trace
#   "CORO", "TAIL", "TRUNC"  boundary, tail call, frames left out
# A node's function name (0x24) does not change its label.


class Event:
    __slots__ = ("ev", "name", "stack", "us", "off", "size", "osize", "nosample", "labels",
                 "type", "addr", "oaddr")


class Stream:
    def __init__(self):
        self.flags = 0
        self.complete = False
        self.problems = []
        self.nodes = {}        # id -> (parent, label)
        self.names = {}        # node id -> (what, name): 0x24 items (NAME_KINDS)
        self.defnames = {}     # (chunk, first line) -> name: 0x25 items
        self.events = []       # Event
        self.selections = []   # (offset, node)
        self.marks = []        # (offset, usec, events so far)
        self.rss = []          # (offset, bytes, last mark usec)
        self.ev_start = 0      # offset of the event section
        self.rate = None       # SAMPLED: the rate item (0x30)
        self.label_sets = {}   # id -> {key: value} (bytes), None: the (other) set (0x26)
        self.label_selections = 0  # 0x27 items
        self.labels_folded = 0     # the last 0x28 item
        self.trace_starts = {}     # trace number -> "chunk:line" where it starts

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
    """Decodes a standard or extended stream and checks every rule of the
    extension it can see from the bytes alone (Stream.problems)."""
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

    frame_kind = {}     # node id -> frame kind
    follows = None      # the node defined by the item before (0x25.. aside)

    def name_item(off, h, body):
        """A 0x24 call-site name, a 0x25 definition name or a reserved item
        0x26..0x2F."""
        if h == 0x25 and st.flags and len(body) <= NAME_ITEM_MAX:
            try:
                rb = Reader(body)
                proto = rb.uleb()
            except Truncated:
                bad("byte %d: definition name: prototype runs past its %d bytes"
                    % (off, len(body)))
                return
            if proto not in syms.lfunc:
                bad("byte %d: definition name of prototype %#x, never announced" % (off, proto))
                return
            st.defnames[(syms.lfunc[proto], syms.lfirst[proto])] = \
                bytes(body[rb.i:]).decode("latin-1")
            return
        if h != 0x24:
            if not st.flags:
                bad("byte %d: item %#x in a standard stream" % (off, h))
            if len(body) > NAME_ITEM_MAX:
                bad("byte %d: item %#x of %d bytes" % (off, h, len(body)))
            return
        if not st.flags & STACKS:
            bad("byte %d: function name without STACKS" % off)
        if len(body) > NAME_ITEM_MAX:
            bad("byte %d: function name of %d bytes" % (off, len(body)))
        try:
            node, what, name = read_name(body)
        except Truncated:
            bad("byte %d: function name: node and kind run past its %d bytes"
                % (off, len(body)))
            return
        ok = True
        if node not in st.nodes:
            bad("byte %d: function name of unknown node %d" % (off, node))
            ok = False
        elif node in st.names:
            bad("byte %d: node %d named again" % (off, node))
            ok = False
        else:
            if frame_kind[node] != 1:
                bad("byte %d: function name of node %d, not a Lua function" % (off, node))
            if follows != node:
                bad("byte %d: function name of node %d not right after it" % (off, node))
        if what not in NAME_KINDS:
            bad("byte %d: node %d: unknown kind of name %d" % (off, node, what))
            ok = False
        if ok:
            st.names[node] = (what, name.decode("latin-1"))

    try:
        read_symtab(r, syms)
        st.ev_start = r.i
        if bytes(data[r.i:r.i + 3]) != b"ljm" or data[r.i + 3] != 3:
            raise ValueError("bad ljm prologue")
        st.flags = data[r.i + 4]
        if st.flags & ~(STACKS | TIME | SAMPLED | TYPES):
            bad("unknown flags %#x" % st.flags)
        if data[r.i + 5] or data[r.i + 6]:
            bad("bytes 5, 6 of the prologue not 0")
        r.i += 7
        if st.flags & SAMPLED:  # the rate comes first (EXTENSION.md, Sampling)
            if r.byte() != 0x30:
                bad("byte %d: a sampled stream without its rate first" % (r.i - 1))
            st.rate = r.uleb()
            if not 1 <= st.rate <= 1 << 32:
                bad("sampling rate %d" % st.rate)
        nosample = None     # offset of a pending 0x31
        sel = None          # None: no selection yet
        lsel = 0            # label set selected (0x27)
        cur_type = 1        # TYPES: the last allocation's type (internal before any)
        typed = None        # TYPES: the event a 0x29 item may follow
        last_us = None
        nevents = 0
        while True:
            off = r.i
            h = r.byte()
            if nosample is not None and h & 3 != REALLOC:
                bad("byte %d: 0x31 not followed by a reallocation" % nosample)
                nosample = None
            if h == 0x80:
                st.complete = True
                if r.i < len(data):
                    bad("%d bytes after the end marker" % (len(data) - r.i))
                break
            if h == 0x29 and st.flags & TYPES:  # an allocation type, right after its event
                body = read_body(r)
                try:
                    t = Reader(body).uleb()
                except Truncated:
                    bad("byte %d: allocation type item cut" % off)
                    continue
                if typed is None:
                    bad("byte %d: allocation type after no allocation" % off)
                elif not 1 <= t < len(TYPE_NAMES):
                    bad("byte %d: allocation type %d" % (off, t))
                else:
                    typed.type = t
                    if typed.ev == ALLOC:
                        cur_type = t
                typed = None
                continue
            typed = None
            if is_annotation(h) and h in (0x26, 0x27, 0x28) and st.flags:
                rb = Reader(read_body(r))
                try:
                    ident = rb.uleb()
                    if h == 0x26:
                        pairs = {}
                        while rb.i < len(rb.d):
                            k = rb.take(rb.uleb())
                            pairs[k] = rb.take(rb.uleb())
                    elif rb.i != len(rb.d):
                        bad("byte %d: item %#x longer than its number" % (off, h))
                except Truncated:
                    bad("byte %d: item %#x cut" % (off, h))
                    continue
                if h == 0x26:
                    if ident in st.label_sets or not 1 <= ident <= 4096:
                        bad("byte %d: label set %d defined twice or out of range" % (off, ident))
                    st.label_sets[ident] = pairs or None
                elif h == 0x27:
                    if ident and ident not in st.label_sets:
                        bad("byte %d: label set %d selected, not defined" % (off, ident))
                    if ident == lsel:
                        bad("byte %d: label set %d selected again (no change)" % (off, ident))
                    lsel = ident
                    st.label_selections += 1
                else:
                    st.labels_folded = ident
                continue
            if is_annotation(h):
                name_item(off, h, read_body(r))
                continue
            follows = None
            if h == 0x31:
                if not st.flags & SAMPLED:
                    bad("byte %d: 0x31 without SAMPLED" % off)
                nosample = off
                continue
            if h == 0x20:
                if not st.flags & STACKS:
                    bad("byte %d: node without STACKS" % off)
                parent = r.uleb()
                kind = r.byte()
                nid = len(st.nodes) + 1
                if parent and parent not in st.nodes:
                    bad("byte %d: node %d before its parent %d" % (off, nid, parent))
                f = frame_fields(r, kind)
                if kind == 1:
                    label = lname(*f)
                    if label is None:
                        bad("byte %d: node %d: prototype %#x not announced" % (off, nid, f[0]))
                        label = "?%#x:%d" % f
                elif kind == 2:
                    n = cname(f[0])
                    if n is None:
                        bad("byte %d: node %d: C address %#x has no symbol" % (off, nid, f[0]))
                    label = "C:%s" % n
                elif kind == 3:
                    if f[0] not in syms.trace:
                        bad("byte %d: node %d: trace %d not announced" % (off, nid, f[0]))
                    label = "TRACE %d" % f[0]
                elif kind in (4, 5, 6):
                    label = {4: "CORO", 5: "TAIL", 6: "TRUNC"}[kind]
                else:
                    raise ValueError("byte %d: unknown frame kind %#x" % (off, kind))
                st.nodes[nid] = (parent, label)
                frame_kind[nid] = kind
                follows = nid
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
            if src == 0:
                raise ValueError("byte %d: bad source" % off)
            loc = read_loc(r, src)
            name = "INTERNAL"
            if src == SRC_LUA:
                name = lname(*loc) or "?"
            elif src == SRC_C:
                name = "C:%s" % cname(loc[0])
            elif src == SRC_TRACE:
                name = "TRACE %d" % loc[0]
            e = Event()
            oaddr, osize, addr, size = read_sizes(r, ev)
            e.osize, e.size = osize or 0, size or 0
            e.oaddr, e.addr = oaddr, addr
            e.ev, e.name, e.off, e.us = ev, name, off, last_us
            e.nosample, nosample = nosample is not None, None
            e.stack = sel or 0
            e.labels = lsel
            # TYPES: an allocation has the last one's type, a reallocation
            # its old block's (None here), unless a 0x29 item follows
            e.type = cur_type if ev == ALLOC and st.flags & TYPES else None
            if st.flags & TYPES and ev != FREE:
                typed = e
            if st.flags & STACKS and sel is None:
                bad("byte %d: event before the first selection" % off)
            st.events.append(e)
            nevents += 1
    except Truncated:
        pass
    for n, (proto, line) in syms.trace.items():
        st.trace_starts[n] = lname(proto, line) or "?"
    return st


def type_totals(st):
    """A TYPES stream's figures per type name, from a replay of its events
    (parse()): {name: [allocated bytes, allocations, bytes in use, blocks in
    use]}. A reallocation counts as an allocation of its new size, of its
    own type or its old block's ("internal" when the stream never showed
    that block made); a free is its block's. Exact streams."""
    out = {}
    live = {}   # address -> (type, size)

    def row(t):
        return out.setdefault(TYPE_NAMES[t], [0, 0, 0, 0])

    for e in st.events:
        old = live.pop(e.oaddr, None) if e.ev != ALLOC else None
        if old is not None:
            f = row(old[0])
            f[2] -= old[1]
            f[3] -= 1
        if e.ev == FREE:
            continue
        t = e.type or (old[0] if old else 1)
        prev = live.pop(e.addr, None)  # an address reused without a free
        if prev is not None:
            f = row(prev[0])
            f[2] -= prev[1]
            f[3] -= 1
        live[e.addr] = (t, e.size)
        f = row(t)
        f[0] += e.size
        f[1] += 1
        f[2] += e.size
        f[3] += 1
    return out


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
                read_frame(r)
                continue
            if h in (0x21, 0x22, 0x23):
                r.uleb()
                continue
            if is_annotation(h):
                read_body(r)
                continue
            ev, src = h & 3, h & 0x1C
            if ev == 0:
                syms.read(r, SYM_OF_SOURCE.get(src))
            else:
                read_loc(r, src)
                read_sizes(r, ev)
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


def check_busy(st, secs=1.0, min_gap_us=0):
    """check_time's problems, and those of a stream recorded over `secs`
    seconds of steady allocation (testdata/recorder/stacks/busy.lua): at
    least 100 marks a second, the last within 0.1 s of the end, at least 8
    RSS samples a second; with min_gap_us, no two marks closer (a recording
    without a ticker writes a mark only when that much time has passed)."""
    probs = check_time(st)
    if not st.marks:
        return probs
    last = st.marks[-1][1]
    if len(st.marks) < 100 * secs or last < (secs - 0.1) * 1e6:
        probs.append("%d marks, the last at %d us, over %g s" % (len(st.marks), last, secs))
    if len(st.rss) < 8 * secs:
        probs.append("%d RSS samples over %g s" % (len(st.rss), secs))
    gaps = [b[1] - a[1] for a, b in zip(st.marks, st.marks[1:])]
    if min_gap_us and gaps and min(gaps) < min_gap_us:
        probs.append("marks %d us apart (at least %d)" % (min(gaps), min_gap_us))
    return probs


# -- Whole-profile figures ----------------------------------------------
#
# Symbols are skipped (names are not needed for totals); the live heap is
# replayed the way ljm_model.h defines it:
#
#   alloc_count/bytes  ALLOC and REALLOC events and their new sizes
#   inuse_count/bytes  blocks allocated during the profile and live at its end
#                      (a free or realloc of an unknown block takes nothing
#                      away; an allocation over a live address drops the old
#                      block)
#   peak_bytes/count   the highest live byte total, after any event
#   by_stack           extended streams: per stack id ("0": none) the
#                      allocations and bytes made under it and the blocks it
#                      made that are live at the end [count, bytes, count, bytes]
#   temporary          frees of a block right after an allocation of the same
#                      size at the same location and stack (heaptrack's
#                      "temporary", ljm's temp_count):
#                      the events as the heaptrack exporter writes them, each
#                      a free of the old block (when known), of a block the
#                      new one overwrites (when any), then the allocation
#   rss_max            the largest RSS sample
#   samples            events that make a block (every ALLOC and REALLOC,
#                      but a reallocation after 0x31)
#   sample_rate        a sampled stream's rate, else None; then every figure
#                      is an estimate (EXTENSION.md, Sampling): a block of s
#                      bytes made by an event counts round(s / p(s)) bytes,
#                      p(s) = 1 - exp(-s / rate), while it lives and where
#                      it was made; a free or realloc of it takes that away;
#                      its count 1 / p(s) is rounded down or up by a coin
#                      the format leaves to the reader, so each count is
#                      the sum of the floors and count_bounds holds
#                      [floors, ceilings] per count (by_stack: [lo, hi]
#                      pairs for its counts)
#   status             "ok", "truncated" (the stream ends inside an item or
#                      without its end marker) or "error" (and "why")


def sample_weight(rate, size):
    """(1 / p(s) rounded down, rounded up, s / p(s) rounded) of a sampled
    block; (1, 1, size) in an exact stream (rate None)."""
    if not rate:
        return 1, 1, size
    if not size:  # p(0) = 0: the format gives no weight; counted once
        return 1, 1, 0
    p = -math.expm1(-size / rate)
    return math.floor(1 / p), math.ceil(1 / p), math.floor(size / p + 0.5)


class SizeKeep:
    """The --size lo..hi filter for totals(keep=...): a block made by event
    number i (0-based among allocation events) of size n is kept when
    born(i, n); a block the stream never showed made, freed with size n,
    when unknown(n)."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def born(self, i, n):
        return self.lo <= n <= self.hi

    def unknown(self, n):
        return self.lo <= n <= self.hi


class FateKeep:
    """--lifetime (None, "leaked", "temporary", "freed") and --lived (lo, hi)
    usec, for totals(keep=...), from fates(data): a block is temporary when
    it is freed before another block is made; lived: from its
    event's time to its free's, or to the last time mark when in use at the
    end. A block the stream never showed made counts as freed, for an
    unknown time."""

    def __init__(self, data, lifetime=None, lived=None):
        self.lifetime, self.lived = lifetime, lived
        self.fate = fates(data)

    def born(self, i, n):
        born_t, end_i, end_t, temp = self.fate[i]
        if self.lifetime == "leaked" and end_i is not None:
            return False
        if self.lifetime == "freed" and end_i is None:
            return False
        if self.lifetime == "temporary" and not temp:
            return False
        if self.lived is not None:
            if born_t is None or end_t is None or not self.lived[0] <= end_t - born_t <= self.lived[1]:
                return False
        return True

    def unknown(self, n):
        return self.lifetime in (None, "freed") and self.lived is None


def fates(data):
    """Each allocation event's block: {i: (its time, the number of the event
    that ends it or None, that event's time or the last time mark, whether
    it ended before another block was made)}, i the event's number among
    allocation events (a reallocation ends one block, then makes another;
    an address reused without a free ends its block)."""
    out, live, now, made = {}, {}, [None], {}
    nmade = 0
    r = _TotalsReader(data)
    read_symtab(r, _Skipped())
    start = r.i
    flags = r.d[start + 4]
    r.i = start + 7
    if flags & SAMPLED:
        r.byte()
        r.uleb()
    nosample, i = False, 0
    while True:
        h = r.byte()
        if h == 0x80:
            break
        if h == 0x31 and flags & SAMPLED:
            nosample = True
            continue
        if h in (0x20, 0x21) and flags & STACKS:
            r.uleb()
            if h == 0x20:
                read_frame(r)
            continue
        if h in (0x22, 0x23) and flags & TIME:
            v = r.uleb()
            if h == 0x22:
                now[0] = v
            continue
        if (h == 0x24 and flags & STACKS) or (0x25 <= h <= 0x2F and flags):
            read_body(r)
            continue
        kind, src = h & 3, h & 0x1C
        if kind == 0:
            _Skipped().read(r, SYM_OF_SOURCE.get(src))
            continue
        read_loc(r, src)
        oaddr, osize, naddr, nsize = read_sizes(r, kind)
        if oaddr is not None and oaddr in live:
            b = live.pop(oaddr)
            out[b] = (out[b][0], i, now[0], made[b] == nmade)
        if naddr is not None and not nosample:
            nmade += 1
            if naddr in live:
                b = live.pop(naddr)
                out[b] = (out[b][0], i, now[0], False)
            out[i] = (now[0], None, None, False)
            made[i] = nmade
            live[naddr] = i
        nosample = False
        i += 1
    for b in live.values():
        out[b] = (out[b][0], None, now[0], False)
    return out


def totals(data, window=None, size=None, keep=None):
    """window: (from_us, to_us) -- only the events dated (by the last time
    mark) in [from, to) count; those before it only change the live heap
    (carried in: in use at its start), those after are read and left out;
    the peak is the window's, starting with what it carries in.
    size: (lo, hi) -- only blocks of lo to hi bytes, as `--size lo..hi`
    keeps them (model/ljm_model.h, "Filters"): a block is kept or left out
    when it is made and its free follows it; a reallocation of which one
    half is kept is a free or an allocation; a block the stream never
    showed made is judged by the size its free gives. keep: a SizeKeep or
    FateKeep (or anything with their two methods) instead. f["dropped"]
    counts the events left out whole."""
    if size is not None:
        keep = SizeKeep(*size)
    f = dict(alloc_count=0, alloc_bytes=0, inuse_count=0, inuse_bytes=0,
             peak_count=0, peak_bytes=0, events=0, temporary=0, stacks=False,
             rss_max=0, by_stack={}, samples=0, sample_rate=None)
    live = {}          # address -> (size, location): estimated bytes if sampled
    live_n = {}        # address -> (fewest, most) blocks it stands for
    alloc_n, live_c = [0, 0], [0, 0]  # counts: (fewest, most)
    live_bytes = 0
    last_plus = None   # (size, location) of the previous line when a '+'
    sums = [0, 0]      # freed and allocated bytes so far
    live_stack = {}    # address -> stack that (re)allocated it
    excluded = set()   # addresses of blocks the filter left out
    f["dropped"] = 0
    f["events_read"] = 0   # allocation events read before the window's end

    def minus(block):
        nonlocal last_plus
        if block == last_plus:
            f["temporary"] += 1
        last_plus = None

    now = 0            # the last time mark (usec)
    started = window is None
    r = _TotalsReader(data)
    skipped = _Skipped()
    status = "ok"
    try:
        read_symtab(r, skipped)
        start = r.i
        if len(r.d) < start + 7 and b"ljm"[:len(r.d) - start] == r.d[start:start + 3]:
            raise Truncated()  # the stream stops inside the prologue
        if r.d[start:start + 3] != b"ljm":
            raise Bad("no ljm prologue")
        if r.d[start + 3] != 3:
            raise Bad("event stream version %d" % r.d[start + 3])
        flags = r.d[start + 4]  # extension flags (decoder/EXTENSION.md)
        if flags & ~15:
            raise Bad("unknown extension flags 0x%x" % flags)
        f["stacks"] = bool(flags & STACKS)
        r.i = start + 7
        rate = None
        if flags & SAMPLED:  # 0x30 rate:U first
            if r.byte() != 0x30:
                raise Bad("a sampled stream without its rate first")
            rate = f["sample_rate"] = r.uleb()
            if not 1 <= rate <= 1 << 32:
                raise Bad("sampling rate %d" % rate)
        nosample = False       # a 0x31 item waits for its reallocation
        stack = 0              # stack selected for the events that follow
        nodes = 0
        while True:
            h = r.byte()
            if nosample and (h > 0x13 or h & 3 != REALLOC):
                raise Bad("0x31 not followed by a reallocation")
            if h == 0x80:
                break
            if h == 0x31 and flags & SAMPLED:
                nosample = True
                continue
            if h in (0x20, 0x21) and flags & STACKS:
                parent = r.uleb()
                if h == 0x21:
                    if parent > nodes:
                        raise Bad("undefined stack node")
                    stack = parent
                    continue
                k, _ = read_frame(r)
                if not 1 <= k <= 6:
                    raise Bad("unknown frame kind")
                if parent > nodes:
                    raise Bad("stack node before its parent")
                nodes += 1
                continue
            if h in (0x22, 0x23) and flags & TIME:
                v = r.uleb()
                if h == 0x22:
                    now = v
                if h == 0x23:
                    f["rss_max"] = max(f["rss_max"], v)
                continue
            # Function names (STACKS) and later annotations: skipped.
            if (h == 0x24 and flags & STACKS) or (0x25 <= h <= 0x2F and flags):
                read_body(r)
                continue
            if h > 0x13:
                raise Bad("bad event header 0x%x" % h)
            kind, src = h & 3, h & 0x1C
            if kind == 0:  # symbol events; 0x00 and 0x04 carry nothing
                skipped.read(r, SYM_OF_SOURCE.get(src))
                continue
            if src == 0:
                raise Bad("unknown source 0")
            loc = (src,) + read_loc(r, src)
            # heaptrack's frame of a block: its location, and its stack when
            # it has one (an event charged to another site than the stack's
            # innermost frame ends at a leaf of that site: ljm_model.h)
            if stack:
                loc = ("stack", stack) + loc

            oaddr, osize, naddr, nsize = read_sizes(r, kind)
            # The model's limits (ljm_model_load.h): a block above 2^56
            # bytes, or byte totals above 2^62, end the stream with an error.
            if (osize or 0) > 2**56 or (nsize or 0) > 2**56:
                raise Bad("impossible block size")
            sums[0] += osize or 0
            sums[1] += nsize or 0
            if max(sums) > 2**62:
                raise Bad("byte totals above 2^62")
            # The whole event is read: apply it (or not: a window).
            before = False
            if window is not None:
                if now >= window[1]:
                    nosample = False
                    continue
                before = now < window[0]
                if not before and not started:
                    started = True
                    f["peak_bytes"], f["peak_count"] = live_bytes, list(live_c)
            ordinal = f["events_read"]
            f["events_read"] += 1
            if keep is not None:
                made = naddr is not None and not nosample
                if oaddr is None:
                    old_ok = False
                elif oaddr in excluded:
                    excluded.discard(oaddr)
                    old_ok = False
                else:
                    old_ok = oaddr in live or keep.unknown(osize)
                new_ok = made and keep.born(ordinal, nsize)
                if made and not new_ok:
                    excluded.add(naddr)
                elif made:
                    excluded.discard(naddr)
                if not old_ok and not new_ok:
                    f["dropped"] += 1
                    nosample = False
                    continue
                if made and not new_ok:
                    naddr = None      # only the old block: a free
                if not old_ok:
                    oaddr = None      # only the new block: an allocation
            if oaddr is not None and oaddr in live:
                block = live.pop(oaddr)
                live_c = [c - n for c, n in zip(live_c, live_n.pop(oaddr))]
                live_bytes -= block[0]
                minus(block)
            if naddr is not None and not nosample:
                lo, hi, est = sample_weight(rate, nsize)
                if not before:
                    per = f["by_stack"].setdefault(str(stack), [0, 0, 0, 0, 0, 0])
                    per[0] += lo         # allocations made under this stack
                    per[1] += hi
                    per[2] += est
                    f["samples"] += 1
                    alloc_n[0] += lo
                    alloc_n[1] += hi
                    f["alloc_bytes"] += est
                live_stack[naddr] = stack
                if naddr in live:
                    block = live.pop(naddr)
                    live_c = [c - n for c, n in zip(live_c, live_n.pop(naddr))]
                    live_bytes -= block[0]
                    minus(block)
                live[naddr] = (est, loc)
                live_n[naddr] = (lo, hi)
                live_c = [live_c[0] + lo, live_c[1] + hi]
                live_bytes += est
                last_plus = (est, loc)
            nosample = False
            if before:
                continue
            f["events"] += 1
            if live_bytes > f["peak_bytes"]:
                f["peak_bytes"] = live_bytes
                f["peak_count"] = live_c
    except Truncated:
        status = "truncated"
    except Bad as e:
        status = "error"
        f["why"] = str(e)
    if not started:  # a window after the last event starts at the end
        f["peak_bytes"], f["peak_count"] = live_bytes, list(live_c)
    f["inuse_bytes"] = live_bytes
    for a, (size, _) in live.items():  # live blocks by the stack that made them
        per = f["by_stack"].setdefault(str(live_stack[a]), [0, 0, 0, 0, 0, 0])
        per[3] += live_n[a][0]
        per[4] += live_n[a][1]
        per[5] += size
    sampled = f["sample_rate"] is not None
    for k, per in f["by_stack"].items():
        f["by_stack"][k] = ([per[0:2], per[2], per[3:5], per[5]] if sampled else
                            [per[0], per[2], per[3], per[5]])
    counts = {"alloc_count": alloc_n, "inuse_count": live_c,
              "peak_count": f["peak_count"] or [0, 0]}
    for k, (lo, hi) in counts.items():
        f[k] = lo
    if sampled:
        f["count_bounds"] = counts
    f["status"] = status
    return f


def load(path):
    """totals() of a file, plain or gzip."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return totals(data)


# -- Strict: a standard stream exactly as written -----------------------
#
# The writer's exact header bytes only, the end marker must be the last
# byte. parse_strict(data) returns (syms, events): syms a list of (kind,
# fields) as read_sym returns them, events a list of tuples (hdr, loc,
# oaddr, osize, naddr, nsize), loc None (internal), (prototype, line) or a
# C address or trace number; iter_events(data, syms) yields the events one
# by one (for big streams) and appends to syms. Both raise ValueError on
# bad input.


def iter_events(data, syms):
    r = _StrictReader(memoryview(data))
    listed = _Listed(syms)
    read_symtab(r, listed)
    r.prologue(b"ljm")
    while True:
        h = r.byte()
        if h == 0x80:
            break
        if h in SYM_OF_SOURCE:
            listed.read(r, SYM_OF_SOURCE[h])
            continue
        ev, src = h & 3, h & 0x1C
        if ev == 0 or src not in (SRC_INT, SRC_LUA, SRC_C, SRC_TRACE) or h > 0x13:
            raise ValueError("bad event header 0x%02x at %d" % (h, r.i - 1))
        loc = read_loc(r, src)
        loc = None if not loc else loc if src == SRC_LUA else loc[0]
        oaddr, osize, naddr, nsize = read_sizes(r, ev)
        yield (h, loc, oaddr or 0, osize or 0, naddr or 0, nsize or 0)
    if r.i != len(data):
        raise ValueError("%d bytes after the epilogue" % (len(data) - r.i))


def parse_strict(data):
    syms = []
    events = list(iter_events(data, syms))
    return syms, events


if __name__ == "__main__":
    if sys.argv[1:2] == ["--rows"]:
        rows, info = decode(open(sys.argv[2], "rb").read())
        for (sec, n), cs in sorted(rows.items()):
            print("%s\t%s\t%s" % (sec, n, cs))
        print(info)
    else:
        print(json.dumps(load(sys.argv[1]), sort_keys=True))
