"""ljmwrite.py -- the tests' writer of ljm streams (doc/ljm-format.md,
decoder/EXTENSION.md): ULEB128 numbers, strings, and Stream, which builds
a v3 profile (symbols, events, extension items); hostile_stream() and
nasty_stream(), streams whose names break naive exporters. The reader is
ljmread.py; heap snapshots (.ljh) are read by ljhread.py.
"""
import os


def uleb(v):
    """ULEB128, as ljm and ljh streams write numbers."""
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def lstr(b):
    return uleb(len(b)) + b


class Stream:
    """Builds a v3 profile: symtab entries first, then events; with flags,
    an extended one (decoder/EXTENSION.md) whose extension items go between
    the events in the order they are added; with rate, a sampled one
    (flags should hold 0x04) whose rate item opens the events."""

    def __init__(self, flags=0, rate=None):
        self.syms = bytearray()
        self.events = bytearray() if rate is None else bytearray(b"\x30" + uleb(rate))
        self.flags = flags
        self.nodes = 0

    # Extension items. Frames: ("lua", proto, line), ("c", addr),
    # ("trace", traceno), ("resume",), ("tail",), ("cut",).
    def node(self, parent, frame):
        """Defines a stack node; returns its id."""
        kind = frame[0]
        body = {"lua": lambda: b"\x01" + uleb(frame[1]) + uleb(frame[2]),
                "c": lambda: b"\x02" + uleb(frame[1]),
                "trace": lambda: b"\x03" + uleb(frame[1]),
                "resume": lambda: b"\x04", "tail": lambda: b"\x05",
                "cut": lambda: b"\x06"}[kind]()
        self.events += b"\x20" + uleb(parent) + body
        self.nodes += 1
        return self.nodes

    def stack(self, node):
        self.events += b"\x21" + uleb(node)

    def name(self, node, what, name):
        """The function name of a Lua node (0x24: 1 global .. 6 metamethod)."""
        body = uleb(node) + uleb(what) + name
        self.events += b"\x24" + uleb(len(body)) + body

    def annotation(self, hdr, body):
        """A reserved item (0x25..0x2F) readers skip."""
        self.events += bytes([hdr]) + uleb(len(body)) + body

    def unsampled(self):
        """0x31: the next event, a reallocation, leaves its new block out of the sample."""
        self.events += b"\x31"

    def time(self, usec):
        self.events += b"\x22" + uleb(usec)

    def rss(self, nbytes):
        self.events += b"\x23" + uleb(nbytes)

    def proto_event(self, addr, chunk, firstline):
        self.events += b"\x08" + uleb(addr) + lstr(chunk) + uleb(firstline)

    def proto(self, addr, chunk, firstline):
        self.syms += b"\x00" + uleb(addr) + lstr(chunk) + uleb(firstline)

    def cfunc(self, addr, name):
        self.syms += b"\x01" + uleb(addr) + lstr(name)

    def trace(self, traceno, proto, line):
        self.syms += b"\x02" + uleb(traceno) + uleb(proto) + uleb(line)

    def _loc(self, src, loc):
        if src == "lua":
            return 0x08, uleb(loc[0]) + uleb(loc[1])
        if src == "c":
            return 0x0C, uleb(loc)
        if src == "trace":
            return 0x10, uleb(loc)
        return 0x04, b""

    def alloc(self, src, loc, addr, size):
        s, l = self._loc(src, loc)
        self.events += bytes([s | 1]) + l + uleb(addr) + uleb(size)

    def free(self, src, loc, addr, size):
        s, l = self._loc(src, loc)
        self.events += bytes([s | 2]) + l + uleb(addr) + uleb(size)

    def realloc(self, src, loc, old_addr, old_size, addr, size):
        s, l = self._loc(src, loc)
        self.events += (bytes([s | 3]) + l + uleb(old_addr) + uleb(old_size) +
                        uleb(addr) + uleb(size))

    def data(self):
        return (b"ljs\x03\x00\x00\x00" + bytes(self.syms) + b"\x80" +
                b"ljm\x03" + bytes([self.flags]) + b"\x00\x00" + bytes(self.events) + b"\x80")


def hostile_stream():
    """A profile whose names hold XML, Markdown and folded-stack specials,
    control characters and invalid UTF-8. Returns (bytes, names) with the
    raw chunk/symbol names used."""
    s = Stream()
    # No newline in the chunk: that would make it a function_alias_N.
    chunk = b'@<a&b>"q\'|`;x y\r\t\xff\xfe\xc3(\xed\xa0\x80]]>.lua'
    cname = b'<cf&"\';\n\x01\xc3|` 12'
    s.proto(0x1000, chunk, 5)
    s.proto(0x2000, b"=\xe2\x80\xa8 77", 0)  # U+2028 (a Perl \s) then digits
    s.proto(0x3000, b"local x = 1\nreturn '<&>'", 0)  # aliased chunk
    s.cfunc(0x7000, cname)
    s.trace(3, 0x1000, 6)
    s.alloc("lua", (0x1000, 7), 0x10, 100)
    s.alloc("lua", (0x1000, 7), 0x20, 50)
    s.alloc("lua", (0x2000, 1), 0x30, 7)
    s.alloc("c", 0x7010, 0x40, 33)
    s.alloc("trace", 3, 0x50, 64)
    s.alloc("int", None, 0x60, 12)
    s.alloc("lua", (0x3000, 2), 0x70, 9)
    s.free("int", None, 0x20, 50)
    return s.data(), (chunk, cname)


def write_hostile(d):
    path = os.path.join(d, "hostile.ljm")
    with open(path, "wb") as f:
        f.write(hostile_stream()[0])
    return path


def nasty_stream():
    """A small stream whose names break naive exporters: angle brackets,
    control bytes, invalid UTF-8, a C symbol named "main", "operator new",
    a very long one-line chunk; and events covering realloc, free of unknown
    blocks, and an address reused without a free."""
    s = Stream()
    s.proto(0x1000, b"@na<me>\x01\xff\xc3.lua", 3)
    s.proto(0x2000, b"@main", 0)
    s.proto(0x3000, b"return 1 -- " + b"x" * 5000, 0)
    for addr, name in [(0x5000, b"main"), (0x6000, b"operator new(unsigned long)"),
                       (0x7000, b"tmpl<int>::f\n\tx"), (0x8000, b"__libc_start_main")]:
        s.cfunc(addr, name)
    s.trace(1, 0x1000, 4)  # trace 1 starts at proto 0x1000:4
    s.alloc("lua", (0x1000, 5), 0xa0, 16)
    s.alloc("lua", (0x2000, 1), 0xb0, 24)        # in "@main"
    s.alloc("lua", (0x3000, 1), 0xc0, 8)         # long chunk
    s.alloc("c", 0x5000, 0xd0, 32)               # C "main"
    s.alloc("c", 0x6008, 0xe0, 48)               # inside operator new
    s.alloc("c", 0x7000, 0xf0, 64)               # template name
    s.alloc("c", 0x8000, 0x100, 72)
    s.alloc("c", 0x10, 0x110, 8)                 # below all symbols
    s.alloc("trace", 1, 0x120, 80)               # trace 1
    s.alloc("trace", 9, 0x130, 88)               # unknown trace 9
    s.alloc("int", None, 0x140, 96)              # INTERNAL
    s.realloc("lua", (0x1000, 6), 0xa0, 16, 0x150, 100)
    s.realloc("lua", (0x1000, 6), 0x150, 100, 0x150, 120)
    s.free("int", None, 0xd0, 32)                # free C main's block
    s.free("int", None, 0x9999, 7)               # unknown block
    s.realloc("int", None, 0x8888, 5, 0x160, 10)  # realloc unknown
    s.alloc("lua", (0x1000, 7), 0xe0, 50)        # over a live block
    s.free("int", None, 0, 0)                    # free(NULL)
    return s.data()
