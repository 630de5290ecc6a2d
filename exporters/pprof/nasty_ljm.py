#!/usr/bin/env python3
"""nasty_ljm.py -- writes a small ljm v3 stream whose names break naive
exporters: angle brackets, control bytes, invalid UTF-8, a C symbol named
"main", "operator new", a very long one-line chunk; and events covering
realloc, free of unknown blocks, and an address reused without a free.

Usage: nasty_ljm.py OUT.ljm
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from export_testlib import Stream  # noqa: E402


def stream():
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


if __name__ == "__main__":
    with open(sys.argv[1], "wb") as fh:
        fh.write(stream())
