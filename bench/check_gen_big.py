"""Checks a gen_big stream: it parses, and its events have big.lua's shape.

usage: check_gen_big.py FILE ITERATIONS
       check_gen_big.py --report REPORT.txt FILE

The expectations are derived here from the script (big.lua) and from how
LuaJIT allocates, not from the generator's code. With --report, the per-site
event counts and byte totals of FILE must equal the rows of a reference
report (testdata/v3/big.txt for a scale-1 stream). Exits 1 with the failed
checks listed.
"""
import re
import sys

import ljmread  # tests/lib/ljmread.py (on PYTHONPATH: bench/BUILD): its strict view, independent of the C code

U64_MAX = (1 << 64) - 1
ALLOC, FREE, REALLOC = 1, 2, 3
INT, LUA = 0x04, 0x08

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def kind(h):
    return h & 3


def site(ev):
    """'INTERNAL' or the Lua line of an event."""
    return "INTERNAL" if ev[0] & 0x1C == INT else ev[1][1]


def check_symtab(syms):
    lua = [v for k, v in syms if k == "lfunc"]
    cfuncs = [v for k, v in syms if k == "cfunc"]
    check(len(cfuncs) >= 5000, "a realistic symtab has >= 5000 C symbols, got %d" % len(cfuncs))
    main = [v for v in lua if v[1] == b"@big.lua" and v[2] == 0]
    check(len(main) == 1, "exactly one @big.lua main chunk prototype")
    builtins = {v[1] for v in lua if v[2] == U64_MAX}
    check(len(builtins) == 8, "the 8 bytecode built-ins with firstline -1, got %r" % builtins)
    check(all(k != "trace" for k, _ in syms), "no traces (jit.off)")
    return main[0][0] if main else None


def check_sources(events, proto):
    bad = [e for e in events if e[0] & 0x1C not in (INT, LUA)]
    check(not bad, "only INTERNAL and Lua sources, got header 0x%02x" % (bad[0][0] if bad else 0))
    lua_ev = [e for e in events if e[0] & 0x1C == LUA]
    check(all(e[1][0] == proto for e in lua_ev), "every Lua event is in @big.lua's main chunk")
    lines = {e[1][1] for e in lua_ev}
    check(lines <= {5, 7, 8, 10}, "Lua events only on lines 5, 7, 8, 10, got %r" % sorted(lines))
    check(all(kind(e[0]) != FREE or e[0] & 0x1C == INT or e[1][1] == 7 for e in events),
          "frees are the GC's (INTERNAL) or the string table's (line 7)")


def check_script(events, n):
    """Allocations the script itself makes, in order and size."""
    strings = [e[5] for e in events if kind(e[0]) == ALLOC and site(e) == 7 and e[5] < 256]
    want = [24 + len("str%d" % i) + 1 for i in range(1, n + 1)]
    check(strings == want, "one string of 24+len+1 bytes per iteration, in order")
    tables = [e[5] for e in events if kind(e[0]) == ALLOC and site(e) == 8]
    check(tables == [88] * n, "one 88-byte table per iteration on line 8")
    check(events and kind(events[0][0]) == ALLOC and site(events[0]) == 5 and events[0][5] == 64,
          "the first event allocates keep (64 B, line 5)")
    check(sum(1 for e in events if site(e) == 5) == 1, "line 5 has one event")

    kept = n // 100
    arr = [e for e in events if site(e) == 10]
    grows = 0
    while kept > (1 << (grows + 1)):
        grows += 1
    want = []
    if kept:
        want.append((ALLOC, 0, 24))
        want += [(REALLOC, ((1 << j) + 1) * 8, ((1 << (j + 1)) + 1) * 8) for j in range(1, grows + 1)]
    check([(kind(e[0]), e[3], e[5]) for e in arr] == want,
          "keep's array: 24 B then doubling reallocs, %d of them" % grows)
    chained = all(arr[i][2] == arr[i - 1][4] for i in range(1, len(arr)))
    check(chained, "each keep realloc moves the block the previous one made")
    sbuf = [e for e in events if kind(e[0]) == REALLOC and site(e) == 7]
    check([(e[3], e[5]) for e in sbuf] == ([(32, 64)] if n else []),
          "the string buffer grows once from 32 to 64 B")
    return kept


def check_strtab(events):
    """String table resizes: grow on line 7 (alloc 2S, free S), shrink by
    the GC (alloc S/2, free S), always an alloc followed by its free."""
    ok = True
    for i, e in enumerate(events):
        big_lua7 = site(e) == 7 and kind(e[0]) == ALLOC and e[5] >= 256
        internal = site(e) == "INTERNAL" and kind(e[0]) == ALLOC
        if big_lua7 or internal:
            nxt = events[i + 1] if i + 1 < len(events) else None
            ratio = 2 if big_lua7 else 0.5
            ok &= (nxt is not None and kind(nxt[0]) == FREE and site(nxt) == site(e)
                   and e[5] == nxt[3] * ratio and e[5] & (e[5] - 1) == 0)
    check(ok, "string table resizes are alloc+free pairs of power-of-two sizes")


def check_heap(events, n, kept):
    """Replays the events on a live map: frees match earlier allocations,
    freed addresses are reused, and only the string table and the string
    buffer survive the final collectgarbage()."""
    live, freed = {}, set()
    unknown, reused, bad = [], 0, 0
    gc_before_end = False
    last_table = max((i for i, e in enumerate(events) if site(e) == 8), default=-1)
    for i, e in enumerate(events):
        h, _, oaddr, osize, naddr, nsize = e
        if kind(h) in (FREE, REALLOC):
            if oaddr in live:
                bad += live.pop(oaddr) != osize
            else:
                unknown.append(osize)
            freed.add(oaddr)
            if kind(h) == FREE and site(e) == "INTERNAL" and i < last_table:
                gc_before_end = True
        if kind(h) in (ALLOC, REALLOC):
            bad += naddr in live
            reused += naddr in freed
            live[naddr] = nsize
    check(bad == 0, "no size mismatch on free and no double allocation (%d bad)" % bad)
    # Made before the profile started: the 512-slot string table (freed at
    # its first resize) and the string buffer (grown on the first concat).
    resizes = [e for e in events if kind(e[0]) == ALLOC and e[5] >= 256 and site(e) != 10]
    check(sorted(unknown) == sorted(([4096] if resizes else []) + ([32] if n else [])),
          "only pre-existing objects are freed unseen, got sizes %r" % unknown[:5])
    want = ([resizes[-1][5]] if resizes else []) + ([64] if n else [])
    check(sorted(live.values()) == sorted(want),
          "after collectgarbage() only the string table and buffer live, got %r"
          % sorted(live.values())[:5])
    gc_frees = sum(1 for e in events if kind(e[0]) == FREE and site(e) == "INTERNAL")
    shrinks = sum(1 for e in events if kind(e[0]) == ALLOC and site(e) == "INTERNAL")
    check(gc_frees == 2 * n + (1 + (1 if kept else 0)) + shrinks,
          "the GC frees every string and table once, plus keep and its array")
    if n >= 200000:  # enough allocation for incremental GC cycles in the loop
        check(gc_before_end, "GC sweeps interleave with the loop's allocations")
        check(reused > n // 2, "freed addresses are reused (%d reuses)" % reused)


SECTIONS = {"ALLOCATIONS": ALLOC, "REALLOCATIONS": REALLOC, "DEALLOCATIONS": FREE}
ROW = re.compile(r"^(\S.*): (\d+) events\t\+(\d+)B\t-(\d+)B$")


def report_rows(text):
    """{(kind, site): (events, +bytes, -bytes)} from a memprof text report."""
    rows, section = {}, None
    for line in text.splitlines():
        if line in SECTIONS:
            section = SECTIONS[line]
        elif line.startswith("HEAP SUMMARY"):
            break
        m = ROW.match(line)
        if m and section:
            rows[(section, m.group(1))] = tuple(int(g) for g in m.group(2, 3, 4))
    return rows


def check_report(path, report):
    """Aggregates the stream the way the report does, streaming (3 M events
    as a list would take gigabytes of Python objects)."""
    with open(report) as f:
        want = report_rows(f.read())
    with open(path, "rb") as f:
        data = f.read()
    got = {}
    try:
        for e in ljmread.iter_events(data, []):
            s = site(e)
            key = (kind(e[0]), "INTERNAL" if s == "INTERNAL" else "@big.lua:%d" % s)
            n, plus, minus = got.get(key, (0, 0, 0))
            got[key] = (n + 1, plus + e[5], minus + e[3])
    except ValueError as e:
        print("FAIL: stream does not parse: %s" % e)
        return 1
    check(len(want) >= 5, "the reference report has rows (%d)" % len(want))
    for key in sorted(set(want) | set(got)):
        check(want.get(key) == got.get(key),
              "%s %s: stream %r, report %r" % (key[0], key[1], got.get(key), want.get(key)))
    for f in failures:
        print("FAIL: " + f)
    print("%s: %d sites, %d checks failed" % (path, len(got), len(failures)))
    return 1 if failures else 0


def main():
    if sys.argv[1] == "--report":
        return check_report(sys.argv[3], sys.argv[2])
    path, n = sys.argv[1], int(sys.argv[2])
    with open(path, "rb") as f:
        data = f.read()
    try:
        syms, events = ljmread.parse_strict(data)
    except ValueError as e:
        print("FAIL: stream does not parse: %s" % e)
        return 1
    proto = check_symtab(syms)
    check_sources(events, proto)
    kept = check_script(events, n)
    check_strtab(events)
    check_heap(events, n, kept)
    for f in failures:
        print("FAIL: " + f)
    print("%s: %d events, %d checks failed" % (path, len(events), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
