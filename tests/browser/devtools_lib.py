"""devtools_lib.py -- driving Chromium's own DevTools frontend
(devtools://devtools/bundled/devtools_app.html) from the browser tests: its
panels live in shadow roots, its Content Security Policy forbids the page-side
waits, and its file pickers are answered in the page."""
import time

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


def load_profile(br, data, name):
    """Opens the Memory panel and loads the file (bytes) under name through
    "Load profile"."""
    br.call("page", width=1400, height=1000)
    br.call("goto", url="devtools://devtools/bundled/devtools_app.html?panel=heap-profiler")
    load = poll(br, BUTTON, "Load profile", 20)
    br.call("log")
    br.eval(PICK, [data.decode("utf-8"), name])
    br.call("click", x=load["x"], y=load["y"])
