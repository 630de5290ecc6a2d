#!/usr/bin/env python3
"""nasty_ljm.py -- writes a small ljm v3 stream whose names break naive
exporters: angle brackets, control bytes, invalid UTF-8, a C symbol named
"main", "operator new", a very long one-line chunk; and events covering
realloc, free of unknown blocks, and an address reused without a free.

Usage: nasty_ljm.py OUT.ljm
"""
import sys


def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def string(s):
    return uleb(len(s)) + s


def stream():
    s = bytearray(b"ljs\x03\x00\x00\x00")
    protos = [(0x1000, b"@na<me>\x01\xff\xc3.lua", 3), (0x2000, b"@main", 0),
              (0x3000, b"return 1 -- " + b"x" * 5000, 0)]
    for addr, chunk, first in protos:
        s += b"\x00" + uleb(addr) + string(chunk) + uleb(first)
    for addr, name in [(0x5000, b"main"), (0x6000, b"operator new(unsigned long)"),
                       (0x7000, b"tmpl<int>::f\n\tx"), (0x8000, b"__libc_start_main")]:
        s += b"\x01" + uleb(addr) + string(name)
    s += b"\x02" + uleb(1) + uleb(0x1000) + uleb(4)  # trace 1 starts at proto 0x1000:4
    s += b"\x80"
    s += b"ljm\x03\x00\x00\x00"
    lua = lambda p, l: uleb(p) + uleb(l)
    ev = [
        b"\x09" + lua(0x1000, 5) + uleb(0xa0) + uleb(16),        # alloc Lua
        b"\x09" + lua(0x2000, 1) + uleb(0xb0) + uleb(24),        # alloc in "@main"
        b"\x09" + lua(0x3000, 1) + uleb(0xc0) + uleb(8),         # long chunk
        b"\x0d" + uleb(0x5000) + uleb(0xd0) + uleb(32),          # C "main"
        b"\x0d" + uleb(0x6008) + uleb(0xe0) + uleb(48),          # inside operator new
        b"\x0d" + uleb(0x7000) + uleb(0xf0) + uleb(64),          # template name
        b"\x0d" + uleb(0x8000) + uleb(0x100) + uleb(72),
        b"\x0d" + uleb(0x10) + uleb(0x110) + uleb(8),            # below all symbols
        b"\x11" + uleb(1) + uleb(0x120) + uleb(80),              # trace 1
        b"\x11" + uleb(9) + uleb(0x130) + uleb(88),              # unknown trace 9
        b"\x05" + uleb(0x140) + uleb(96),                        # INTERNAL
        b"\x0b" + lua(0x1000, 6) + uleb(0xa0) + uleb(16) + uleb(0x150) + uleb(100),
        b"\x0b" + lua(0x1000, 6) + uleb(0x150) + uleb(100) + uleb(0x150) + uleb(120),
        b"\x06" + uleb(0xd0) + uleb(32),                         # free C main's block
        b"\x06" + uleb(0x9999) + uleb(7),                        # unknown block
        b"\x07" + uleb(0x8888) + uleb(5) + uleb(0x160) + uleb(10),  # realloc unknown
        b"\x09" + lua(0x1000, 7) + uleb(0xe0) + uleb(50),        # over a live block
        b"\x06" + uleb(0) + uleb(0),                             # free(NULL)
    ]
    for e in ev:
        s += e
    s += b"\x80"
    return bytes(s)


if __name__ == "__main__":
    with open(sys.argv[1], "wb") as fh:
        fh.write(stream())
