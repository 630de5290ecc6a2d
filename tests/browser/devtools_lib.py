"""devtools_lib.py -- driving Chromium's own DevTools frontend
(devtools://devtools/bundled/devtools_app.html) from the browser tests: its
panels live in shadow roots, its Content Security Policy forbids the page-side
waits, and its file pickers are answered in the page."""
import os
import re
import time

import browser_lib as B

T = B.T

# deep(root, sel): querySelectorAll through every shadow root; center(e).
DEEP = r"""const deep = (root, sel) => {
  const out = [...root.querySelectorAll(sel)];
  for (const e of root.querySelectorAll("*")) if (e.shadowRoot) out.push(...deep(e.shadowRoot, sel));
  return out;
};
const center = (e) => { const r = e.getBoundingClientRect();
  return r.width > 0 ? {x: r.left + r.width / 2, y: r.top + r.height / 2} : null; };"""

# Where the button with this label is ("Load profile").
BUTTON = r"""(label) => { %s
  const b = deep(document, "devtools-button, button").find((e) => e.textContent.trim() === label);
  return b ? center(b) : null; }""" % DEEP

# The file picker answered in the page: the next <input type=file> click gets
# the given file and a change event, as if the user had picked it
# (Playwright's file chooser is not one of the shared agent's operations).
PICK = r"""([text, name]) => {
  const click = HTMLInputElement.prototype.click;
  HTMLInputElement.prototype.click = function () {
    if (this.type !== "file") return click.call(this);
    HTMLInputElement.prototype.click = click;
    const dt = new DataTransfer();
    dt.items.add(new File([text], name, {type: "application/json"}));
    this.files = dt.files;
    this.dispatchEvent(new Event("change", {bubbles: true}));
  };
  return true; }"""


def poll(br, fn, arg, timeout):
    """br.wait_for without the page's eval: DevTools' Content Security
    Policy forbids it, so the predicate runs through "eval" until it
    returns something truthy. RuntimeError after timeout seconds."""
    end = time.time() + timeout
    while True:
        r = br.eval(fn, arg)
        if r:
            return r
        if time.time() > end:
            raise RuntimeError("no %r within %ds" % (arg, timeout))
        time.sleep(0.2)


def load_profile(br, data, name, height=1000):
    """Opens the Memory panel (in a page height pixels tall) and loads the
    file (bytes) under name through "Load profile"."""
    br.call("page", width=1400, height=height)
    br.call("goto", url="devtools://devtools/bundled/devtools_app.html?panel=heap-profiler")
    load = poll(br, BUTTON, "Load profile", 20)
    br.call("log")
    br.eval(PICK, [data.decode("utf-8"), name])
    br.call("click", x=load["x"], y=load["y"])


# -- A .heapprofile in the Memory panel -----------------------------------------

DT_ITEM = r"""(title) => { %s
  const li = deep(document, "li").find((e) => e.innerText.replace(/\s+/g, " ").trim() === title);
  return li ? center(li) : null; }""" % DEEP

DT_ROWS = r"""() => { %s
  return deep(document, "table.data tr.data-grid-data-grid-node").map((tr) => {
    const c = [...tr.cells];
    const fn = c.find((x) => x.classList.contains("function-column"));
    const link = fn ? fn.querySelector("button, .devtools-link") : null;
    const name = fn ? fn.textContent.slice(0, fn.textContent.length - (link ? link.textContent.length : 0)) : null;
    return [c[0] && c[0].getAttribute("aria-label"), c[1] && c[1].getAttribute("aria-label"),
            name, link ? link.textContent : ""];
  }).filter((r) => r[0]); }""" % DEEP

DT_VIEW = r"""(view) => { %s
  const s = deep(document, "select").find((e) => [...e.options].some((o) => o.value === view));
  if (!s) return false;
  s.value = view;
  s.dispatchEvent(new Event("change", {bubbles: true}));
  return true; }""" % DEEP


def heap_nodes(head):
    """(node, parent node) depth first, without recursion."""
    out, todo = [], [(head, None)]
    while todo:
        n, parent = todo.pop()
        out.append((n, parent))
        todo += [(c, n) for c in reversed(n["children"])]
    return out


def heap_devtools(doc):
    """DevTools' Heavy (bottom up) rows: per function (name, scriptId, line,
    column) its self bytes, and its total as DevTools may count it: the
    nodes' totals summed, or without a node below another node of the same
    function counted twice. The Heavy tree (BottomUpProfileDataGrid.ts)
    means the second, but looks a node's ancestors up in a map it makes per
    tree level, where they never are: Chromium's DevTools shows the first.
    Either is accepted. The head is not a row."""
    totals, rows = {}, {}
    nodes = heap_nodes(doc["head"])
    for n, _ in reversed(nodes):
        totals[id(n)] = n["selfSize"] + sum(totals[id(c)] for c in n["children"])

    def uid(n):
        cf = n["callFrame"]
        return (cf["functionName"], cf["scriptId"], cf["lineNumber"], cf["columnNumber"])

    todo = [(c, frozenset()) for c in doc["head"]["children"]]
    while todo:
        n, above = todo.pop()
        r = rows.setdefault(uid(n), [0, 0, 0])
        r[0] += n["selfSize"]
        r[2] += totals[id(n)]
        if uid(n) not in above:
            r[1] += totals[id(n)]
        todo += [(c, above | {uid(n)}) for c in n["children"]]
    top = [(uid(c)[0], c["selfSize"], totals[id(c)]) for c in doc["head"]["children"]]
    return rows, top, totals[id(doc["head"])]


def bytes_label(label):
    m = re.match(r"^([0-9]+) bytes, ", label or "")
    return int(m.group(1)) if m else None


def shown_rows(br, op, n, timeout):
    """The rows the current view shows, sorted (function, self bytes, total
    bytes), once their number op ('>=', '==') n, or what is shown after
    timeout seconds."""
    try:
        got = poll(br, "(n) => { const r = (%s)(); return r.length %s n ? r : null; }" % (DT_ROWS, op),
                   n, timeout)
    except RuntimeError:
        got = br.eval(DT_ROWS)
    return sorted((r[2], bytes_label(r[0]), bytes_label(r[1])) for r in got)


def check_heap_in_devtools(br, name, data, doc, shots, total=None):
    """Chromium's own DevTools loads the .heapprofile (bytes; doc parsed) in its
    Memory panel; its Heavy and Tree views show every function's self and total
    bytes as the file has them (heap_devtools), the Tree adding up to total
    when given; screenshots named after shots when given."""
    rows, top, head = heap_devtools(doc)
    # Tall enough for every row (the tables draw only the rows in view); the
    # screenshots are of a window of the usual height.
    tall = max(1000, 24 * (max(len(rows), len(top)) + 12))

    def shoot(view):
        if shots:
            br.call("viewport", width=1400, height=1000)
            br.screenshot("heapprofile_devtools_%s_%s.png" % (shots, view))
            br.call("viewport", width=1400, height=tall)

    try:
        load_profile(br, data, name, tall)
    except RuntimeError as e:
        T.check(False, "%s: DevTools shows no Memory panel with 'Load profile': %s" % (name, e))
        return
    title = "%s (Loaded)" % os.path.splitext(name)[0]
    try:
        item = poll(br, DT_ITEM, title, 20)
    except RuntimeError:
        T.check(False, "%s: DevTools lists no %r under Sampling profiles" % (name, title))
        return
    br.call("click", x=item["x"], y=item["y"])
    # DevTools keeps the last view chosen (in its settings): ask for each.
    T.check(br.eval(DT_VIEW, "Heavy"), "%s: no Heavy (bottom up) view" % name)
    # A row is right with either total (heap_devtools).
    want = sorted((k[0], s, t) for k, (s, t, _) in rows.items())
    have = shown_rows(br, ">=", len(rows), 20)
    alt = {(k[0], s, t2): (k[0], s, t) for k, (s, t, t2) in rows.items()}
    have = sorted(alt.get(h, h) for h in have)
    T.check(have == want, "%s: DevTools Heavy (bottom up)\n  shows %r\n  file  %r"
            % (name, [h for h in have if h not in want][:6], [w for w in want if w not in have][:6]))
    shoot("heavy")
    T.check(br.eval(DT_VIEW, "Tree"), "%s: no Tree (top down) view" % name)
    have = shown_rows(br, "==", len(top), 10)
    T.check(have == sorted(top), "%s: DevTools Tree (top down)\n  shows %r\n  file  %r"
            % (name, have, sorted(top)))
    if total is not None:
        shown = sum(t or 0 for _, _, t in have)
        T.check(shown == total, "%s: DevTools Tree adds up to %d, not %d" % (name, shown, total))
    shoot("tree")
    if shots and br.eval(DT_VIEW, "Flame"):
        time.sleep(1)
        shoot("chart")
    errs = [m for m in br.call("log") if m["type"] == "pageerror"]
    T.check(not errs, "%s: DevTools page errors: %r" % (name, errs[:5]))
    T.check(head == sum(s["size"] for s in doc["samples"]), "%s: samples" % name)
