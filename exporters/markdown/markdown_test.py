#!/usr/bin/python3
"""Markdown tables on the whole corpus: the exact layout, right-aligned
numbers with thousands separators, rows sorted by size, one row per site
with a non-zero figure, totals equal to the decoder's, --top, --min-bytes,
--value, and escaping of hostile names; a sampled stream says its figures
are estimates, and they are the independent reader's. Where ljm counts
temporary allocations (exact streams), the allocation tables have a
Temporary column with the JSON's figures, whose total is the independent
reader's, and --value temp_count sorts by it."""
import os
import re

import export_testlib as T

NUM = r"(0|[1-9][0-9]{0,2}(?:,[0-9]{3})*)"
ROW = re.compile(r"^\| " + NUM + r" \| (?:" + NUM + r" \| )?" + NUM + r" \| (.*) \|$")
SPAN = re.compile(r"(`+)( ?)(.*?)\2\1(?!`)")
TEMP_HEADER = "| Allocations | Temporary | Total size | Context |"
HEADERS = {"alloc": "| Allocations | Total size | Context |",
           "inuse": "| Live objects | Live size | Context |",
           "peak": "| Objects at peak | Size at peak | Context |"}
PAIR = {"alloc": ("alloc_count", "alloc_bytes"), "inuse": ("inuse_count", "inuse_bytes"),
        "peak": ("peak_count", "peak_bytes"), "temp": ("alloc_count", "alloc_bytes")}
FOOTER = re.compile(r"^Total: (?P<count>" + NUM[1:-1] + r") [a-z ]+(?: \((?P<temp>" + NUM[1:-1] +
                    r") temporary\))?, (?P<bytes>" + NUM[1:-1] + r") bytes in (?P<sites>[0-9]+) sites"
                    r"(?:; (?P<hidden>[0-9]+) hidden by --min-bytes/--top \((?P<hcount>" + NUM[1:-1] +
                    r") [a-z ]+, (?:(?P<htemp>" + NUM[1:-1] + r") temporary, )?(?P<hbytes>" +
                    NUM[1:-1] + r") bytes\))?\.$")


def n(s):
    return int(s.replace(",", ""))


def unescape(cell):
    return cell.replace("\\|", "|")


def cells(context):
    """The code spans of a Context cell, joined by <br>: [(fence, text)], or
    None when the cell is not made of them."""
    out, pos = [], 0
    while True:
        m = SPAN.match(context, pos)
        if not m:
            return None
        out.append((m.group(1), m.group(3)))
        pos = m.end()
        if pos == len(context):
            return out
        if not context.startswith("<br>", pos):
            return None
        pos += 4


def parse(tag, text, kind, temp):
    """(rows, footer match): rows (count, bytes, context, temporary), temporary
    None without that column (temp: the profile counts temporaries)."""
    lines = text.split("\n")
    T.check(lines[0].startswith("# LuaJIT memory profile `"), "%s: heading %r" % (tag, lines[0]))
    fam = kind.split("_")[0]
    header = TEMP_HEADER if temp and fam in ("alloc", "temp") else HEADERS[fam]
    try:
        h = lines.index(header)
    except ValueError:
        T.check(False, "%s: no header %r" % (tag, header))
        return None
    align = "|---:|---:|---:|:---|" if header == TEMP_HEADER else "|---:|---:|:---|"
    T.check(lines[h + 1] == align, "%s: alignment row %r" % (tag, lines[h + 1]))
    rows, i = [], h + 2
    while i < len(lines) and lines[i].startswith("|"):
        m = ROW.match(lines[i])
        cell = cells(m.group(4)) if m and (m.group(2) is not None) == (header == TEMP_HEADER) else None
        if T.check(cell is not None, "%s: bad row %r" % (tag, lines[i])):
            for fence, text in cell:
                T.check(fence not in text, "%s: fence inside %r" % (tag, lines[i]))
                T.check(not re.search(r"(?<!\\)\|", text), "%s: unescaped | in %r" % (tag, lines[i]))
            rows.append((n(m.group(1)), n(m.group(3)), tuple(unescape(t) for _, t in cell),
                         n(m.group(2)) if m.group(2) is not None else None))
        i += 1
    T.check(lines[i] == "" and i + 2 == len(lines) - 1 and lines[-1] == "",
            "%s: text after the table %r" % (tag, lines[i:]))
    foot = FOOTER.match(lines[i + 1]) if i + 1 < len(lines) else None
    T.check(foot is not None and (foot.group("temp") is not None) == (header == TEMP_HEADER),
            "%s: footer %r" % (tag, lines[i + 1:]))
    return rows, foot


def expect(model, kind):
    """Rows: one per call-tree node with figures of its own (a site of a
    standard stream), largest first, then by the site's name; temp_count:
    the nodes with temporaries, most first, then by allocations."""
    fam = kind.split("_")[0]
    c, b = PAIR[fam]
    key = (lambda f: (f["temp_count"], f[c])) if fam == "temp" else \
        (lambda f: (f[c], f[b])) if kind.endswith("count") else (lambda f: (f[b], f[c]))
    temp = model["totals"]["temp_count"] is not None and fam in ("alloc", "temp")
    rows = []
    for i, nd in enumerate(model["nodes"]):
        f = nd["self"]
        if nd["kind"] != "frame" or not (f["temp_count"] if fam == "temp" else
                                         f[c] or f[b] or (temp and f["temp_count"])):
            continue
        name = model["sites"][nd["site"]]["name"]
        ctx = tuple(T.clean(x, False) for x in T.node_context(model, i))
        rows.append(((tuple(-k for k in key(f)), T.clean(name, False).encode(), i),
                     (f[c], f[b], ctx, f["temp_count"] if temp else None)))
    rows.sort(key=lambda r: r[0])
    return [r[1] for r in rows]


def run(prof, d, model, kind, extra=()):
    tag = "%s [%s %s]" % (os.path.basename(prof), kind, " ".join(extra))
    data = T.convert_ok(prof, os.path.join(d, "out.md"), None, ["--value", kind] + list(extra))
    if data is None:
        return None
    text = data.decode("utf-8", "strict")
    temp = model["totals"]["temp_count"] is not None
    parsed = parse(tag, text, kind, temp)
    if parsed is None:
        return None
    T.check(("\nFigures are estimates " in text) == bool(model["stream"]["sample_rate"]),
            "%s: the estimates' sentence, sample_rate %r" % (tag, model["stream"]["sample_rate"]))
    rows, foot = parsed
    want = expect(model, kind)
    c, b = PAIR[kind.split("_")[0]]
    T.check(n(foot.group("count")) == sum(w[0] for w in want) and
            n(foot.group("bytes")) == sum(w[1] for w in want),
            "%s: footer totals %r" % (tag, foot.group(0)))
    if not kind.startswith("temp"):
        T.check(n(foot.group("count")) == model["totals"][c] and
                n(foot.group("bytes")) == model["totals"][b],
                "%s: footer totals %r" % (tag, foot.group(0)))
    if foot.group("temp") is not None:
        T.check(n(foot.group("temp")) == model["totals"]["temp_count"],
                "%s: footer temporaries %r, JSON %d" % (tag, foot.group(0), model["totals"]["temp_count"]))
    T.check(int(foot.group("sites")) == len(want), "%s: footer site count" % tag)
    return tag, rows, want, foot


def check_sampled(prof, d, model):
    """The sampled stream: its sentence before the table, and footer
    totals that are the independent reader's estimates."""
    want = T.reader_figures(prof)
    note = "Figures are %s." % T.sampled_note(want["sample_rate"])
    data = T.convert_ok(prof, "-", "markdown")
    T.check(data is not None and note in data.decode("utf-8").split("\n"),
            "%s: no line %r" % (prof, note))
    for kind in T.VALUE_KINDS:
        r = run(prof, d, model, kind)
        if not T.check(r is not None, "%s [%s]: failed" % (prof, kind)):
            continue
        c, b = PAIR[kind.split("_")[0]]
        T.check(T.fig_ok(want, c, n(r[3].group("count"))) and T.fig_ok(want, b, n(r[3].group("bytes"))),
                "%s: footer %r, the reader says %d %s, %d bytes"
                % (r[0], r[3].group(0), want[c], want.get("count_bounds", {}).get(c, ""), want[b]))
    return True


def main():
    d = T.tmpdir()
    ran = 0
    sampled = False
    for prof in T.corpus() + [T.write_hostile(d)]:
        model = T.load_json(prof, d)
        if model is None:
            continue
        if os.path.basename(prof) == T.SAMPLED:
            sampled = check_sampled(prof, d, model)
        for kind in T.VALUE_KINDS:
            r = run(prof, d, model, kind)
            if r is None:
                T.check(False, "%s: markdown failed where json worked" % prof)
                continue
            tag, rows, want, foot = r
            # names can tie on their figures; compare in the expected order
            T.check([x[:2] for x in rows] == [x[:2] for x in want], "%s: figures/order differ" % tag)
            T.check(sorted(rows) == sorted(want), "%s: rows differ: %r vs %r" % (tag, rows[:3], want[:3]))
            T.check(foot.group("hidden") is None, "%s: hid rows without options" % tag)
            ran += 1
        if model["totals"]["temp_count"] is not None:
            # Temporary allocations: the JSON's, whose total is the reader's
            reader = T.reader_figures(prof)
            T.check(model["totals"]["temp_count"] == reader["temporary"],
                    "%s: JSON temp_count %d, the reader says %d"
                    % (prof, model["totals"]["temp_count"], reader["temporary"]))
            r = run(prof, d, model, "temp_count")
            if T.check(r is not None, "%s: --value temp_count failed" % prof):
                tag, rows, want, foot = r
                T.check(rows == want, "%s: rows differ: %r vs %r" % (tag, rows[:3], want[:3]))
                ran += 1
        else:
            r = T.run([T.ljm_binary(), "convert", "-f", "markdown", "--value", "temp_count", "-o", "-", prof])
            T.check(r.returncode == 1 and "--value temp_count: a sampled recording" in r.stderr
                    and r.stdout == "", "%s: --value temp_count rc=%d %r"
                    % (prof, r.returncode, r.stderr[-200:]))
        want = expect(model, "alloc_bytes")
        tag, rows, _, foot = run(prof, d, model, "alloc_bytes", ["--top", "3"])
        T.check(rows == [w for w in rows] and [x[:2] for x in rows] == [x[:2] for x in want[:3]],
                "%s: --top 3 rows %r" % (tag, rows))
        T.check((foot.group("hidden") is not None) == (len(want) > 3), "%s: --top footer" % tag)
        if len(want) >= 2:
            limit = want[len(want) // 2][1]
            tag, rows, _, foot = run(prof, d, model, "alloc_bytes", ["--min-bytes", str(limit)])
            keep = [w for w in want if w[1] >= limit]
            T.check([x[:2] for x in rows] == [x[:2] for x in keep], "%s: --min-bytes rows" % tag)
            hidden = len(want) - len(keep)
            T.check(int(foot.group("hidden") or 0) == hidden, "%s: hidden count" % tag)
            if hidden:
                T.check(n(foot.group("hbytes")) == sum(w[1] for w in want if w[1] < limit),
                        "%s: hidden bytes" % tag)
                if want[0][3] is not None:
                    T.check(n(foot.group("htemp")) == sum(w[3] for w in want if w[1] < limit),
                            "%s: hidden temporaries" % tag)
    T.check(sampled, "%s not checked" % T.SAMPLED)
    T.finish("markdown_test", ran)


main()
