#!/usr/bin/python3
"""`ljm convert -o x.speedscope.json` and `-o x.heapprofile` in the programs
people open them with, in one headless Chromium:

speedscope (its web app from npm, served over http://127.0.0.1), through
#profileURL=:
  * every .speedscope.json file also validates against the schema speedscope
    itself ships (dist/release/file-format-schema.json, read here with a
    small draft-07 validator), then the app must say it imports a speedscope
    json file, with no console or page errors;
  * its profile list shows every profile's name and total weight in the
    profile's unit (bytes as "692 B", counts as "13", time as "12.00ms"),
    computed here from the file, and the active profile is the first one;
  * for every profile (switched with speedscope's "n" key, the header
    showing "name (k/N)"), the Sandwich table lists every frame of the
    file that profile uses, with the total and self values computed here
    from the file, formatted as speedscope formats the unit;
  * each .heapprofile must import as a Chrome heap profile, its Sandwich
    table as speedscope's heap-profile reader counts the file's nodes.

Chromium's own DevTools (devtools://devtools/bundled/devtools_app.html,
the Memory panel): each .heapprofile goes through "Load profile" (the file
picker is answered in the page: Playwright's file chooser is not one of the
shared agent's operations), must appear under "Sampling profiles", and its
Heavy (bottom up) table must show, per function, the self and total bytes
computed here from the file as DevTools adds them up (by function name,
scriptId, line and column, a node below another of the same function not
counted twice), and its Tree (top down) table the head's children.

For a sampled stream (testdata/ext/sampled.ljm): speedscope's window title
carries the estimates' sentence, its profile list the independent reader's
(tests/lib/ljmread.py) estimates, and the DevTools Tree adds up to the reader's
estimate of the bytes in use.

Every expectation comes from the converted files, never from hard-coded
frame names. Screenshots go to the test's outputs and /tmp/browser-shots."""
import json
import os
import re
import time
import urllib.parse
from decimal import ROUND_HALF_UP, Decimal

import browser_lib as B
import devtools_lib as D

T = B.T
PROFILES = [("ext", "stacked.ljm"), ("v3", "jit_on.ljm"), ("v3", "cfuncs.ljm"), ("v3", "test.ljm"),
            ("ext", "sampled.ljm")]

# -- speedscope's pages ------------------------------------------------------

ROWS = r"""() => [...document.querySelectorAll("tr")]
  .filter((tr) => tr.cells.length === 3)
  .map((tr) => [...tr.cells].map((c) => c.textContent))"""

SANDWICH_ROW = re.compile(r"^(.*) \(([<>]?[0-9.]+)%\)$")

# -- Formats as speedscope and DevTools print them -------------------------------


def to_fixed(x, digits):
    """JavaScript's Number.prototype.toFixed for x >= 0 (exact value, ties up)."""
    return str(Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def fmt_value(v, unit):
    """speedscope's value formatters: bytes, none (toLocaleString, en-US)
    and the time units."""
    if unit == "bytes":
        if v < 1024:
            return to_fixed(v, 0) + " B"
        for suffix in ("KB", "MB"):
            v /= 1024
            if v < 1024:
                return to_fixed(v, 2) + " " + suffix
        return to_fixed(v / 1024, 2) + " GB"
    if unit == "none":
        return "{:,}".format(v) if isinstance(v, int) or v == int(v) else str(v)
    mult = {"nanoseconds": 1e-9, "microseconds": 1e-6, "milliseconds": 1e-3, "seconds": 1}[unit]
    s = v * mult
    if s / 60 >= 1:
        m = int(s // 60)
        return "%d:%02d" % (m, int(s - m * 60))
    if s >= 1:
        return to_fixed(s, 2) + "s"
    if s / 0.001 >= 1:
        return to_fixed(s / 0.001, 2) + "ms"
    if s / 1e-6 >= 1:
        return to_fixed(s / 1e-6, 2) + "\xb5s"
    return to_fixed(s / 1e-9, 2) + "ns"


# -- The schema speedscope ships, checked with a small draft-07 validator -----------


def validate(schema, node, value, path="$"):
    """Errors of value against node (a sub-schema of schema): $ref, anyOf,
    type, enum, const, required, properties, items; what the file format
    schema uses."""
    if "$ref" in node:
        name = node["$ref"].split("/")[-1]
        return validate(schema, schema["definitions"][name], value, path)
    if "anyOf" in node:
        for alt in node["anyOf"]:
            if not validate(schema, alt, value, path):
                return []
        return ["%s: matches none of anyOf" % path]
    errs = []
    t = node.get("type")
    types = {"object": dict, "array": list, "string": str}
    if t == "number" and not (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return ["%s: not a number" % path]
    if t in types and not isinstance(value, types[t]):
        return ["%s: not a %s" % (path, t)]
    if "enum" in node and value not in node["enum"]:
        errs.append("%s: %r not in %r" % (path, value, node["enum"]))
    if "const" in node and value != node["const"]:
        errs.append("%s: %r is not %r" % (path, value, node["const"]))
    if isinstance(value, dict):
        for k in node.get("required", []):
            if k not in value:
                errs.append("%s: %s missing" % (path, k))
        for k, sub in node.get("properties", {}).items():
            if k in value:
                errs += validate(schema, sub, value[k], path + "." + k)
    if isinstance(value, list) and "items" in node:
        for i, x in enumerate(value):
            errs += validate(schema, node["items"], x, "%s[%d]" % (path, i))
            if len(errs) > 5:
                break
    return errs


# -- What the files say ------------------------------------------------------------------


def sandwich_of_stacks(weighted):
    """{frame: [total, self]} from (stack, weight) pairs as speedscope's
    Sandwich counts them: total once per stack holding the frame, self at
    the leaf."""
    out = {}
    for stack, w in weighted:
        if not w:
            continue
        for f in set(stack):
            out.setdefault(f, [0, 0])[0] += w
        out.setdefault(stack[-1], [0, 0])[1] += w
    return out


def sandwich_of_events(events):
    """The same for an evented profile, adding each stretch of time in the
    order speedscope does (so float sums agree)."""
    out, open_, last = {}, [], None
    for e in events:
        if last is not None and open_:
            d = e["at"] - last
            for f in set(open_):
                out.setdefault(f, [0, 0])[0] += d
            out.setdefault(open_[-1], [0, 0])[1] += d
        last = e["at"]
        if e["type"] == "O":
            open_.append(e["frame"])
        else:
            open_.pop()
    return out


def profile_sandwich(p):
    if p["type"] == "sampled":
        return sandwich_of_stacks(zip((tuple(s) for s in p["samples"]), p["weights"]))
    return sandwich_of_events(p["events"])


def heap_speedscope(doc):
    """speedscope's heap-profile reader: one sample per node (the head
    included) weighing its selfSize, its stack the path from the head; a
    frame is functionName, url, lineNumber and columnNumber."""
    parent, weighted = {}, []
    for n, p in D.heap_nodes(doc["head"]):
        parent[id(n)] = p
        stack, k = [], n
        while k is not None:
            cf = k["callFrame"]
            stack.append((cf["functionName"], cf["url"], cf["lineNumber"], cf["columnNumber"]))
            k = parent[id(k)]
        weighted.append((tuple(reversed(stack)), n["selfSize"]))
    return sandwich_of_stacks(weighted)


# -- The checks ------------------------------------------------------------------------


def sandwich_rows(br, n):
    try:
        rows = br.wait_for(r"""(n) => { const r = (%s)().filter((r) => /%%\)$/.test(r[0]));
                               return r.length >= n ? r : null; }""" % ROWS, n, timeout=10000)
    except RuntimeError:
        rows = [r for r in br.eval(ROWS) if r[0].endswith("%)")]
    out = []
    for total, self_, name in rows:
        a, b = SANDWICH_ROW.match(total), SANDWICH_ROW.match(self_)
        out.append((name, a.group(1) if a else total, b.group(1) if b else self_))
    return out


def check_sandwich(tag, br, frames_named, fig, unit):
    """The Sandwich table against {frame key: [total, self]} (names from
    frames_named)."""
    want = sorted((frames_named(k), fmt_value(t, unit), fmt_value(s, unit)) for k, (t, s) in fig.items())
    got = sorted(sandwich_rows(br, len(want)))
    T.check(len(got) == len(want), "%s: Sandwich lists %d symbols, the file has %d"
            % (tag, len(got), len(want)))
    missing = [w for w in want if w not in got]
    T.check(not missing, "%s: Sandwich rows (name, total, self) missing, e.g. %r; it shows %r"
            % (tag, missing[:2], [g for g in got if g not in want][:2]))


def open_app(br, base, name, title, wait_text):
    """A fresh speedscope page on the file; title: the name it shows (None:
    the file's own profile names)."""
    url = "%s/speedscope/index.html#profileURL=%s" % (base, urllib.parse.quote(base + "/" + name, safe=""))
    if title:
        url += "&title=" + urllib.parse.quote(title, safe="")
    br.call("page", width=1400, height=1600)  # a fresh document: the app reads the hash once
    status = br.call("goto", url=url)
    T.check(status == 200, "%s: speedscope page: HTTP %r" % (name, status))
    try:
        br.wait_for(B.SPEEDSCOPE_LOADED, wait_text, timeout=20000)
        return True
    except RuntimeError as e:
        return T.check(False, "%s: speedscope did not show the profile: %s" % (name, e))


def click_tab(br, tag, label):
    tab = br.eval(B.SPEEDSCOPE_TAB, label)
    if T.check(tab is not None, "%s: no %s tab" % (tag, label)):
        br.call("click", x=tab["x"], y=tab["y"])


def check_sampled_list(name, br, listed, reader):
    """A sampled stream: the title and the totals of the figures' profiles."""
    title = br.eval("() => document.title")
    T.check(title.endswith(" (%s) - speedscope" % T.sampled_note(reader["sample_rate"])),
            "%s: window title %r" % (name, title))
    shown = {n.split(":")[0]: v for n, v in listed}
    for fig in ("alloc_bytes", "alloc_count", "inuse_bytes", "inuse_count", "peak_bytes"):
        v = shown.get(fig)
        ok = (v == fmt_value(reader[fig], "bytes") if fig.endswith("bytes") else
              v is not None and T.fig_ok(reader, fig, int(v.replace(",", ""))))
        T.check(ok, "%s: %s total shown %r, the reader's estimate %d %s"
                % (name, fig, v, reader[fig], reader.get("count_bounds", {}).get(fig, "")))


def check_speedscope_json(br, base, name, doc, schema, shots, reader=None):
    errs = validate(schema, schema, doc)
    T.check(not errs, "%s: against speedscope's schema: %s" % (name, errs[:5]))
    profiles, frames = doc["profiles"], doc["shared"]["frames"]
    if not open_app(br, base, name, None, profiles[0]["name"]):
        return
    log = br.call("log")
    T.check(any(m["type"] == "log" and m["text"] == "Importing as speedscope json file" for m in log),
            "%s: speedscope did not import a speedscope json file: %r" % (name, [m["text"] for m in log][:8]))
    errs = [m for m in log if m["type"] in ("error", "pageerror")]
    # The profile list: names and totals in each profile's unit.
    listed = [r[1:] for r in br.eval(ROWS) if r[0].isdigit()]
    want = []
    for p in profiles:
        total = sum(p["weights"]) if p["type"] == "sampled" else p["endValue"] - p["startValue"]
        want.append([p["name"], fmt_value(total, p["unit"])])
    T.check(listed == want, "%s: profile list\n  shows %r\n  file  %r" % (name, listed, want))
    if reader:
        check_sampled_list(name, br, listed, reader)
    if shots:
        br.screenshot("speedscope_json_%s_time_order.png" % shots)
    click_tab(br, name, "Sandwich")
    for k, p in enumerate(profiles):
        tag = "%s profile %d (%s)" % (name, k + 1, p["name"])
        header = "%s (%d/%d)" % (p["name"], k + 1, len(profiles))
        try:
            br.wait_for("(h) => document.body.innerText.includes(h)", header, timeout=5000)
        except RuntimeError:
            T.check(False, "%s: header %r not shown" % (tag, header))
        check_sandwich(tag, br, lambda i: frames[i]["name"], profile_sandwich(p), p["unit"])
        if shots and k == 0:
            br.screenshot("speedscope_json_%s_sandwich.png" % shots)
        if k + 1 < len(profiles):
            br.call("key", key="n")
    if shots and profiles[-1]["type"] == "evented":
        click_tab(br, name, "Time Order")
        br.screenshot("speedscope_json_%s_real_time.png" % shots)
    errs += br.errors()
    T.check(not errs, "%s: console or page errors: %r" % (name, errs[:5]))


def check_heap_in_speedscope(br, base, name, doc, shots):
    title = "ljmkit " + name
    if not open_app(br, base, name, title, title):
        return
    log = br.call("log")
    T.check(any(m["type"] == "log" and m["text"] == "Importing as Chrome Heap Profile" for m in log),
            "%s: speedscope did not import a Chrome heap profile: %r" % (name, [m["text"] for m in log][:8]))
    errs = [m for m in log if m["type"] in ("error", "pageerror")]
    if shots:
        br.screenshot("heapprofile_speedscope_%s.png" % shots)
    click_tab(br, name, "Sandwich")
    check_sandwich(name + " in speedscope", br, lambda k: k[0], heap_speedscope(doc), "bytes")
    errs += br.errors()
    T.check(not errs, "%s: console or page errors: %r" % (name, errs[:5]))



def main():
    args = B.parse_args()
    root, app = B.speedscope_root(args, "speedscope-json-")
    with open(os.path.join(app, "file-format-schema.json")) as f:
        schema = json.load(f)
    sources = [os.path.join(B.RUNFILES, "testdata", d, p) for d, p in PROFILES]
    sources.append(B.nasty_profile(B.tmpdir("nasty-")))
    cases = []
    for src in sources:
        B.need(src, "corpus profile")
        stem = os.path.splitext(os.path.basename(src))[0]
        ss = B.convert(args.ljm, src, os.path.join(root, stem + ".speedscope.json"))
        hp = B.convert(args.ljm, src, os.path.join(root, stem + ".heapprofile"))
        reader = T.reader_figures(src)
        cases.append((stem, json.loads(ss), hp, json.loads(hp),
                      reader if reader["sample_rate"] else None))
    httpd, base = B.serve(root)
    br = B.Browser(args)
    t0 = time.time()
    try:
        for stem, ss, hp, hdoc, reader in cases:
            shots = stem if stem in ("stacked", "test", "sampled") else None
            for what, fn in (("speedscope", lambda: check_speedscope_json(
                                 br, base, stem + ".speedscope.json", ss, schema, shots, reader)),
                             ("heap in speedscope", lambda: check_heap_in_speedscope(
                                 br, base, stem + ".heapprofile", hdoc, shots)),
                             ("heap in DevTools", lambda: D.check_heap_in_devtools(
                                 br, stem + ".heapprofile", hp, hdoc, shots,
                                 reader["inuse_bytes"] if reader else None))):
                try:
                    fn()
                except RuntimeError as e:
                    T.check(False, "%s %s: browser: %s" % (stem, what, e))
    finally:
        br.close()
        httpd.shutdown()
    print("speedscope_json_test: %d profiles in %.1fs, %d checks passed"
          % (len(cases), time.time() - t0, T.CHECKS.passed))
    T.finish("speedscope_json_test", len(cases))


main()
