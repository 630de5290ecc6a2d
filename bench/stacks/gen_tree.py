#!/usr/bin/env python3
"""Writes an extended ljm stream (decoder/EXTENSION.md) whose call tree has a
given shape, for the deep- and wide-stack benchmark (bench/stacks/run.sh).

  gen_tree.py deep N OUT   a chain of N stack nodes (one function recursing,
                           its calls on 7 lines); an allocation at every
                           100th node and at the innermost one
  gen_tree.py wide N OUT   N nodes three levels deep: sqrt(N) callers under
                           main, each calling sqrt(N) functions of its own
                           (64 lines each); one allocation per leaf

Output is deterministic."""
import os
import sys

# The tests' stream writer (PYTHONPATH=tests/lib): ULEB128, length-prefixed strings.
from ljmwrite import lstr, uleb

PROTO = 0x10000  # prototypes at PROTO + 0x100 * i


def main():
    shape, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    syms, ev = bytearray(), bytearray()
    nodes = 0
    addr = 0x7f0000000000

    def node(parent, proto, line):
        nonlocal nodes
        ev.extend(b"\x20" + uleb(parent) + b"\x01" + uleb(proto) + uleb(line))
        nodes += 1
        return nodes

    def alloc(stack, proto, line, size):
        nonlocal addr
        ev.extend(b"\x21" + uleb(stack) + b"\x09" + uleb(proto) + uleb(line) +
                  uleb(addr) + uleb(size))
        addr += 64

    if shape == "deep":
        syms += b"\x00" + uleb(PROTO) + lstr(b"@bench/recurse.lua") + uleb(1)
        parent = 0
        for i in range(1, n + 1):
            parent = node(parent, PROTO, 3 + i % 7)
            if i % 100 == 0 or i == n:
                alloc(parent, PROTO, 3 + i % 7, 48)
    elif shape == "wide":
        k = max(1, int(round(n ** 0.5)))
        for i in range(k + 1):
            syms += (b"\x00" + uleb(PROTO + 0x100 * i) +
                     lstr(b"@bench/mod%d.lua" % i) + uleb(1))
        root = node(0, PROTO, 2)
        made = 1
        for i in range(1, k + 1):
            if made >= n:
                break
            mid = node(root, PROTO, 10 + i)
            made += 1
            p = PROTO + 0x100 * i
            for j in range(k):
                if made >= n:
                    break
                leaf = node(mid, p, 1 + j % 64)
                made += 1
                alloc(leaf, p, 1 + j % 64, 32 + j % 5 * 16)
    else:
        sys.exit("usage: gen_tree.py deep|wide N OUT")
    data = (b"ljs\x03\x00\x00\x00" + bytes(syms) + b"\x80" +
            b"ljm\x03\x01\x00\x00" + bytes(ev) + b"\x80")
    with open(out, "wb") as f:
        f.write(data)
    print("gen_tree: %s %d: %d nodes, %d bytes" % (shape, n, nodes, len(data)),
          file=sys.stderr)


main()
