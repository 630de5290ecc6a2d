#!/usr/bin/python3
"""Folded stacks on the whole corpus: the strict C.5 grammar, both readers'
parsing rules, merged and sorted lines, the frames.h hierarchy rebuilt from
the JSON export, and line totals equal to the decoder's totals; those of a
sampled stream equal to the independent reader's estimates."""
import os
import re

import export_testlib as T

STRICT = re.compile(r"^[^;\n\r]+(;[^;\n\r]+)* [1-9][0-9]*$")
FLAMEGRAPH_PL = re.compile(r"^(.*)\s+?(\d+(?:\.\d*)?)$")
SPEEDSCOPE = re.compile(r"^(.*) (\d+)$")


def check_lines(tag, data):
    """Grammar checks; returns {stack: count}."""
    T.check(data == b"" or data.endswith(b"\n"), "%s: no final newline" % tag)
    try:
        text = data.decode("utf-8", "strict")
    except UnicodeDecodeError as e:
        T.check(False, "%s: invalid UTF-8: %s" % (tag, e))
        return {}
    lines = text.split("\n")[:-1] if text else []
    out = {}
    for ln in lines:
        if not T.check(STRICT.match(ln) is not None, "%s: bad line %r" % (tag, ln)):
            continue
        stack, count = ln.rsplit(" ", 1)
        m = FLAMEGRAPH_PL.match(ln)
        T.check(m and m.group(1) == stack and m.group(2) == count,
                "%s: flamegraph.pl would split %r differently" % (tag, ln))
        T.check(FLAMEGRAPH_PL.match(stack) is None,
                "%s: flamegraph.pl would read %r as differential" % (tag, ln))
        s = SPEEDSCOPE.match(ln)
        T.check(s and s.group(1) == stack, "%s: speedscope misreads %r" % (tag, ln))
        T.check(all(f != "" for f in stack.split(";")), "%s: empty frame in %r" % (tag, ln))
        T.check(stack not in out, "%s: duplicate stack %r" % (tag, stack))
        out[stack] = int(count)
    T.check(lines == sorted(lines, key=lambda l: l.rsplit(" ", 1)[0].encode()),
            "%s: lines not sorted" % tag)
    return out


def expected(model, kind):
    want = {}
    for i, n in enumerate(model["nodes"]):
        v = n["self"][kind]
        if v:
            k = T.folded_stack(T.node_frames(model, i))
            want[k] = want.get(k, 0) + v
    return want


def main():
    d = T.tmpdir()
    ran = sampled = 0
    for prof in T.corpus() + [T.write_hostile(d)]:
        model = T.load_json(prof, d)
        reader = T.reader_figures(prof) if os.path.basename(prof) == T.SAMPLED else None
        for kind in T.VALUE_KINDS:
            out = os.path.join(d, "out.folded")
            data = T.convert_ok(prof, out, None, ["--value", kind])
            if data is None:
                continue
            tag = "%s [%s]" % (os.path.basename(prof), kind)
            got = check_lines(tag, data)
            T.check(model is not None, "%s: json failed where folded worked" % tag)
            if model is None:
                continue
            T.check(sum(got.values()) == model["totals"][kind],
                    "%s: lines sum to %d, totals say %d" % (tag, sum(got.values()), model["totals"][kind]))
            if reader:
                sampled += T.check(reader["sample_rate"] and T.fig_ok(reader, kind, sum(got.values())),
                                   "%s: lines sum to %d, the reader's estimate is %d %s"
                                   % (tag, sum(got.values()), reader[kind],
                                      reader.get("count_bounds", {}).get(kind, "")))
            T.check(got == expected(model, kind), "%s: stacks differ from the frames.h rules:\n  got  %r\n  want %r"
                    % (tag, sorted(got.items())[:5], sorted(expected(model, kind).items())[:5]))
            ran += 1
        # default value kind is alloc_bytes, and "-o -" writes to stdout
        if model is not None:
            a = T.convert_ok(prof, os.path.join(d, "a.folded"))
            b = T.convert_ok(prof, "-", "folded", ["--value", "alloc_bytes"])
            T.check(a == b, "%s: default or stdout output differs" % prof)
    T.check(sampled == len(T.VALUE_KINDS), "%s: %d kinds checked" % (T.SAMPLED, sampled))
    T.finish("folded_test", ran)


main()
