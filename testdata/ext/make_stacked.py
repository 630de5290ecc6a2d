#!/usr/bin/env python3
"""make_stacked.py -- writes stacked.ljm, a hand-made extended stream
(decoder/EXTENSION.md) with every frame kind, for the decoder, model and
exporter tests; run from this folder: PYTHONPATH=../../tests/lib python3 make_stacked.py

The program it pretends to record:

    app.lua   main chunk (line 0 is its definition)
      line 10   cache = Cache.new()     Cache.new defined at lib.lua:3
      line 11   fill(cache)             fill defined at app.lua:5
                  app.lua:6  string.rep(...)     (a built-in, C address 0x9000)
                  app.lua:7  cache:put(...)      Cache:put defined at lib.lua:8
                                lib.lua:9 allocates
      line 12   coroutine.wrap(worker)()  worker defined at app.lua:20
                  [coroutine] app.lua:21 allocates
      line 13   a trace started at app.lua:14 runs and allocates
      deep recursion cut by the depth limit, a tail call
  Function names from the stream (0x24): Cache.new a field 'new', fill a
  global 'fill', Cache:put a method 'put'; a reserved 0x25 item is skipped.
"""
import os

from ljmwrite import Stream  # the tests' stream writer: PYTHONPATH=../../tests/lib

here = os.path.dirname(os.path.abspath(__file__))

APP, LIB, CACHE_NEW, PUT, FILL, WORKER = 0x1000, 0x2000, 0x2100, 0x2200, 0x1100, 0x1200
REP, WRAP = 0x9000, 0x9100


def stream():
    s = Stream(flags=3)
    s.proto(APP, b"@app.lua", 0)
    s.proto(LIB, b"@lib.lua", 0)
    s.proto(CACHE_NEW, b"@lib.lua", 3)
    s.proto(PUT, b"@lib.lua", 8)
    s.proto(FILL, b"@app.lua", 5)
    s.cfunc(REP, b"string.rep")
    s.cfunc(WRAP, b"coroutine.wrap")
    s.time(0)
    s.rss(1 << 20)
    m10 = s.node(0, ("lua", APP, 10))
    new = s.node(m10, ("lua", CACHE_NEW, 4))
    s.name(new, 4, b"new")
    s.annotation(0x25, b"later")
    s.stack(new)
    s.alloc("lua", (CACHE_NEW, 4), 0x100, 64)       # the cache table
    m11 = s.node(0, ("lua", APP, 11))
    f6 = s.node(m11, ("lua", FILL, 6))
    s.name(f6, 1, b"fill")
    rep = s.node(f6, ("c", REP))
    s.stack(rep)
    for i in range(3):                               # string.rep: charged to app.lua:6
        s.alloc("lua", (FILL, 6), 0x200 + 16 * i, 100)
    f7 = s.node(m11, ("lua", FILL, 7))
    s.name(f7, 1, b"fill")
    put = s.node(f7, ("lua", PUT, 9))
    s.name(put, 3, b"put")
    s.stack(put)
    s.time(4000)
    for i in range(4):
        s.alloc("lua", (PUT, 9), 0x300 + 16 * i, 32)
    s.free("lua", (PUT, 9), 0x200, 100)              # a temporary string freed
    s.stack(0)
    s.free("int", None, 0x210, 100)                  # GC outside any stack
    s.proto_event(WORKER, b"@app.lua", 20)           # a prototype made later
    m12 = s.node(0, ("lua", APP, 12))
    wrap = s.node(m12, ("c", WRAP))
    co = s.node(wrap, ("resume",))
    w21 = s.node(co, ("lua", WORKER, 21))
    s.stack(w21)
    s.time(9000)
    s.rss(3 << 20)
    s.alloc("lua", (WORKER, 21), 0x400, 48)
    s.realloc("lua", (WORKER, 21), 0x400, 48, 0x410, 96)
    s.trace(1, APP, 14)
    m13 = s.node(0, ("lua", APP, 13))
    tr = s.node(m13, ("trace", 1))
    s.stack(tr)
    for i in range(2):
        s.alloc("trace", 1, 0x500 + 16 * i, 24)
    cut = s.node(0, ("cut",))
    deep = s.node(cut, ("lua", FILL, 7))
    tail = s.node(deep, ("tail",))
    leaf = s.node(tail, ("lua", PUT, 9))
    s.stack(leaf)
    s.alloc("lua", (PUT, 9), 0x600, 8)
    s.time(12000)
    return s.data()


if __name__ == "__main__":
    with open(os.path.join(here, "stacked.ljm"), "wb") as fh:
        fh.write(stream())
