#!/usr/bin/env python3
"""make_sampled.py -- writes sampled.ljm, a hand-made sampled stream
(decoder/EXTENSION.md, "Sampling": flags 0x07, one byte in 1024) with
stacks and time, for the exporter tests; run from this folder:
PYTHONPATH=../../tests/lib python3 make_sampled.py

The program it pretends to record (only the sampled events are written):

    app.lua   main chunk
      line 10   Obj.new()   (lib.lua:3) lib.lua:4 makes small tables
                            (64, 40, 24 bytes: far below the rate)
      line 11   string.rep  (a built-in) charged to app.lua:11: a 4096-byte
                            and a 16384-byte string (above the rate)
      line 12   Cache:put   (lib.lua:8) lib.lua:9 allocates 512 and 900
                bytes, frees the 24-byte table, moves the 64-byte one
                (64 -> 2048, in the sample), moves the 512-byte one out of
                the sample (0x31: 512 -> 1024) and grows a block that is not
                in the sample (48 -> 3000, in the sample: its old half is
                unknown)
      line 13   coroutine.wrap(worker)()  [coroutine] app.lua:21: 200 bytes
      then the GC frees the 2048-byte block and the 4096-byte string.
"""
import os

from ljmwrite import Stream  # the tests' stream writer: PYTHONPATH=../../tests/lib

here = os.path.dirname(os.path.abspath(__file__))

APP, NEW, PUT, WORKER = 0x1000, 0x2100, 0x2200, 0x1200
REP, WRAP = 0x9000, 0x9100
RATE = 1024


def stream():
    s = Stream(flags=7, rate=RATE)
    s.proto(APP, b"@app.lua", 0)
    s.proto(NEW, b"@lib.lua", 3)
    s.proto(PUT, b"@lib.lua", 8)
    s.proto(WORKER, b"@app.lua", 20)
    s.cfunc(REP, b"string.rep")
    s.cfunc(WRAP, b"coroutine.wrap")
    s.time(0)
    s.rss(1 << 20)
    m10 = s.node(0, ("lua", APP, 10))
    new = s.node(m10, ("lua", NEW, 4))
    s.name(new, 4, b"new")
    s.stack(new)
    s.alloc("lua", (NEW, 4), 0x100, 64)
    s.alloc("lua", (NEW, 4), 0x140, 24)
    s.alloc("lua", (NEW, 4), 0x180, 40)
    m11 = s.node(0, ("lua", APP, 11))
    rep = s.node(m11, ("c", REP))
    s.stack(rep)
    s.alloc("lua", (APP, 11), 0x1000, 4096)
    s.alloc("lua", (APP, 11), 0x3000, 16384)
    s.time(3000)
    m12 = s.node(0, ("lua", APP, 12))
    put = s.node(m12, ("lua", PUT, 9))
    s.name(put, 3, b"put")
    s.stack(put)
    s.alloc("lua", (PUT, 9), 0x200, 512)
    s.alloc("lua", (PUT, 9), 0x240, 900)
    s.free("lua", (PUT, 9), 0x140, 24)                  # a sampled block freed
    s.realloc("lua", (PUT, 9), 0x100, 64, 0x400, 2048)  # moved, still sampled
    s.unsampled()
    s.realloc("lua", (PUT, 9), 0x200, 512, 0x500, 1024)  # moved out of the sample
    s.realloc("lua", (PUT, 9), 0x900, 48, 0x600, 3000)  # an unknown block grown
    s.time(6000)
    s.rss(3 << 20)
    m13 = s.node(0, ("lua", APP, 13))
    wrap = s.node(m13, ("c", WRAP))
    co = s.node(wrap, ("resume",))
    w21 = s.node(co, ("lua", WORKER, 21))
    s.stack(w21)
    s.alloc("lua", (WORKER, 21), 0x700, 200)
    s.stack(0)
    s.free("int", None, 0x400, 2048)
    s.free("int", None, 0x1000, 4096)
    s.time(9000)
    return s.data()


if __name__ == "__main__":
    with open(os.path.join(here, "sampled.ljm"), "wb") as fh:
        fh.write(stream())
