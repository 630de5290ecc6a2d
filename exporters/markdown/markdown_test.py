#!/usr/bin/python3
"""Markdown tables on the whole corpus: the exact layout, right-aligned
numbers with thousands separators, rows sorted by size, one row per site
with a non-zero figure, totals equal to the decoder's, --top, --min-bytes,
--value, and escaping of hostile names."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.environ["TEST_SRCDIR"], "ljmkit", "exporters", "common"))
import export_testlib as T  # noqa: E402

NUM = r"(0|[1-9][0-9]{0,2}(?:,[0-9]{3})*)"
ROW = re.compile(r"^\| " + NUM + r" \| " + NUM + r" \| (`+)( ?)(.*?)\4\3 \|$")
HEADERS = {"alloc": "| Allocations | Total size | Context |",
           "inuse": "| Live objects | Live size | Context |",
           "peak": "| Objects at peak | Size at peak | Context |"}
PAIR = {"alloc": ("alloc_count", "alloc_bytes"), "inuse": ("inuse_count", "inuse_bytes"),
        "peak": ("peak_count", "peak_bytes")}
FOOTER = re.compile(r"^Total: " + NUM + r" [a-z ]+, " + NUM + r" bytes in ([0-9]+) sites"
                    r"(?:; ([0-9]+) hidden by --min-bytes/--top \(" + NUM + r" [a-z ]+, " + NUM + r" bytes\))?\.$")


def n(s):
    return int(s.replace(",", ""))


def unescape(cell):
    return cell.replace("\\|", "|")


def parse(tag, text, kind):
    lines = text.split("\n")
    T.check(lines[0].startswith("# LuaJIT memory profile `"), "%s: heading %r" % (tag, lines[0]))
    fam = kind.split("_")[0]
    try:
        h = lines.index(HEADERS[fam])
    except ValueError:
        T.check(False, "%s: no header %r" % (tag, HEADERS[fam]))
        return None
    T.check(lines[h + 1] == "|---:|---:|:---|", "%s: alignment row %r" % (tag, lines[h + 1]))
    rows, i = [], h + 2
    while i < len(lines) and lines[i].startswith("|"):
        m = ROW.match(lines[i])
        if T.check(m is not None, "%s: bad row %r" % (tag, lines[i])):
            T.check("`" * len(m.group(3)) not in m.group(5), "%s: fence inside %r" % (tag, lines[i]))
            T.check(not re.search(r"(?<!\\)\|", m.group(5)), "%s: unescaped | in %r" % (tag, lines[i]))
            rows.append((n(m.group(1)), n(m.group(2)), unescape(m.group(5))))
        i += 1
    T.check(lines[i] == "" and i + 2 == len(lines) - 1 and lines[-1] == "",
            "%s: text after the table %r" % (tag, lines[i:]))
    foot = FOOTER.match(lines[i + 1]) if i + 1 < len(lines) else None
    T.check(foot is not None, "%s: footer %r" % (tag, lines[i + 1:]))
    return rows, foot


def expect(model, kind):
    c, b = PAIR[kind.split("_")[0]]
    key = (lambda s: (s[c], s[b])) if kind.endswith("count") else (lambda s: (s[b], s[c]))
    sites = [s for s in model["sites"] if s[c] or s[b]]
    sites.sort(key=lambda s: (tuple(-k for k in key(s)), T.clean(s["name"], False).encode()))
    return [(s[c], s[b], T.clean(T.site_label(s, model["sites"]), False)) for s in sites]


def run(prof, d, model, kind, extra=()):
    tag = "%s [%s %s]" % (os.path.basename(prof), kind, " ".join(extra))
    data = T.convert_ok(prof, os.path.join(d, "out.md"), None, ["--value", kind] + list(extra))
    if data is None:
        return None
    parsed = parse(tag, data.decode("utf-8", "strict"), kind)
    if parsed is None:
        return None
    rows, foot = parsed
    want = expect(model, kind)
    c, b = PAIR[kind.split("_")[0]]
    T.check(n(foot.group(1)) == model["totals"][c] and n(foot.group(2)) == model["totals"][b],
            "%s: footer totals %r" % (tag, foot.group(0)))
    T.check(int(foot.group(3)) == len(want), "%s: footer site count" % tag)
    return tag, rows, want, foot


def main():
    d = T.tmpdir()
    ran = 0
    for prof in T.corpus() + [T.write_hostile(d)]:
        model = T.load_json(prof, d)
        if model is None:
            continue
        for kind in T.VALUE_KINDS:
            r = run(prof, d, model, kind)
            if r is None:
                T.check(False, "%s: markdown failed where json worked" % prof)
                continue
            tag, rows, want, foot = r
            # names can tie on their figures; compare in the expected order
            T.check([x[:2] for x in rows] == [x[:2] for x in want], "%s: figures/order differ" % tag)
            T.check(sorted(rows) == sorted(want), "%s: rows differ: %r vs %r" % (tag, rows[:3], want[:3]))
            T.check(foot.group(4) is None, "%s: hid rows without options" % tag)
            ran += 1
        want = expect(model, "alloc_bytes")
        tag, rows, _, foot = run(prof, d, model, "alloc_bytes", ["--top", "3"])
        T.check(rows == [w for w in rows] and [x[:2] for x in rows] == [x[:2] for x in want[:3]],
                "%s: --top 3 rows %r" % (tag, rows))
        T.check((foot.group(4) is not None) == (len(want) > 3), "%s: --top footer" % tag)
        if len(want) >= 2:
            limit = want[len(want) // 2][1]
            tag, rows, _, foot = run(prof, d, model, "alloc_bytes", ["--min-bytes", str(limit)])
            keep = [w for w in want if w[1] >= limit]
            T.check([x[:2] for x in rows] == [x[:2] for x in keep], "%s: --min-bytes rows" % tag)
            hidden = len(want) - len(keep)
            T.check(int(foot.group(4) or 0) == hidden, "%s: hidden count" % tag)
            if hidden:
                T.check(n(foot.group(6)) == sum(w[1] for w in want if w[1] < limit),
                        "%s: hidden bytes" % tag)
    T.finish("markdown_test", ran)


main()
