#!/usr/bin/env python3
"""make_labelled.py -- writes labelled.ljm, a hand-made stream with time
marks and labels (decoder/EXTENSION.md, "Labels"), for the decoder, model
and report tests; run from this folder:
PYTHONPATH=../../tests/lib python3 make_labelled.py

What it holds, and what `ljm report --by plugin` must say of it:

    set 1 {plugin=auth}, set 2 {plugin=json, route=/a}, set 3 (other)
    under 1: alloc 0x100 64, alloc 0x200 100
    under 2: alloc 0x300 40; realloc 0x100 64 -> 0x400 128 (auth's block:
             stays auth's); free 0x200 100 (auth's)
    under 0: alloc 0x500 10
    under 3: alloc 0x600 7; realloc 0x900 5 (never seen) -> 0x700 50
    folded count 2

    plugin  in use  blocks  allocated  allocs  freed  frees
    auth    128     1       292        3       100    1

    (a reallocation counts as an allocation of its new size, not a free,
    as in every figure of the model)
    (other) 57      2       57         2       0      0
    json    40      1       40         1       0      0
    (none)  10      1       10         1       0      0
"""
import os

from ljmwrite import Stream, lstr, uleb  # the tests' stream writer: PYTHONPATH=../../tests/lib

here = os.path.dirname(os.path.abspath(__file__))
APP = 0x1000


def labels(s, set_id, *pairs):
    s.annotation(0x26, uleb(set_id) + b"".join(lstr(k) + lstr(v) for k, v in pairs))


def select(s, set_id):
    s.annotation(0x27, uleb(set_id))


def stream():
    s = Stream(flags=2)
    s.proto(APP, b"@app.lua", 0)
    s.time(0)
    labels(s, 1, (b"plugin", b"auth"))
    select(s, 1)
    s.alloc("lua", (APP, 10), 0x100, 64)
    s.alloc("lua", (APP, 11), 0x200, 100)
    s.time(1000)
    labels(s, 2, (b"plugin", b"json"), (b"route", b"/a"))
    select(s, 2)
    s.alloc("lua", (APP, 20), 0x300, 40)
    s.realloc("lua", (APP, 21), 0x100, 64, 0x400, 128)
    s.free("int", None, 0x200, 100)
    select(s, 0)
    s.alloc("lua", (APP, 30), 0x500, 10)
    labels(s, 3)
    s.annotation(0x28, uleb(2))
    select(s, 3)
    s.alloc("lua", (APP, 40), 0x600, 7)
    s.realloc("lua", (APP, 41), 0x900, 5, 0x700, 50)
    s.time(2000)
    return s.data()


if __name__ == "__main__":
    with open(os.path.join(here, "labelled.ljm"), "wb") as f:
        f.write(stream())
