"""Shared parts of the browser tests: where Chromium, playwright-core and
speedscope are (scripts/setup-tests.d/browser.sh installs them), one headless
Chromium per test file steered through browser_agent.js, screenshots, free
ports and small HTTP helpers. Checks and the summary come from
tests/lib/export_testlib.py.

Command line of every driver: --ljm PATH [--npm-dir DIR] [--chromium PATH];
the defaults are the environment's LJM_BROWSER_NPM and LJM_CHROMIUM, else
/var/cache/ljmkit/npm and /usr/bin/chromium."""
import argparse
import functools
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

RUNFILES = os.path.join(os.environ.get("TEST_SRCDIR", os.getcwd()), "ljmkit")
import ljmwrite
import export_testlib as T  # noqa: F401  (re-exported to the drivers)

AGENT = os.path.join(RUNFILES, "tests", "browser", "browser_agent.js")
SHOTS = "/tmp/browser-shots"  # a copy of every screenshot, to look at


def parse_args(argv=None, required=()):
    """The drivers' command line; 'required' names more options each takes
    (--app-dir: args.app_dir)."""
    p = argparse.ArgumentParser()
    p.add_argument("--ljm", required=True, help="the ljm binary")
    for opt in required:
        p.add_argument(opt, required=True)
    p.add_argument("--npm-dir", default=os.environ.get("LJM_BROWSER_NPM") or "/var/cache/ljmkit/npm")
    p.add_argument("--chromium", default=os.environ.get("LJM_CHROMIUM") or "/usr/bin/chromium")
    a = p.parse_args(argv)
    a.ljm = os.path.abspath(a.ljm)
    return a


def need(path, what):
    """Exits with a hint when something setup installs is missing."""
    if not os.path.exists(path):
        sys.exit("%s not found at %s: run scripts/setup.sh (scripts/setup-tests.d/browser.sh)"
                 % (what, path))


def tmpdir(prefix):
    return tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("TEST_TMPDIR"))


def convert(ljm, profile, out, extra=()):
    """ljm convert; the output bytes (a failed conversion fails the test).
    Run in the profile's folder, so titles name the file, not a long path."""
    p = subprocess.run([ljm, "convert"] + list(extra) + ["-o", os.path.abspath(out),
                                                         os.path.basename(profile)],
                       cwd=os.path.dirname(os.path.abspath(profile)),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit("ljm convert %s -o %s %s: exit %d: %s"
                 % (" ".join(extra), out, profile, p.returncode, p.stderr.decode("utf-8", "replace")))
    with open(out, "rb") as f:
        return f.read()


def corpus_file(name, folder="v3"):
    path = os.path.join(RUNFILES, "testdata", folder, name)
    need(path, "corpus profile")
    return path


def nasty_profile(d):
    """The hostile-names stream of ljmwrite.nasty_stream()."""
    out = os.path.join(d, "nasty.ljm")
    with open(out, "wb") as fh:
        fh.write(ljmwrite.nasty_stream())
    return out


class Browser:
    """One headless Chromium; each method is one request to the agent."""

    def __init__(self, args, timeout=60):
        need(args.chromium, "Chromium (Debian package chromium)")
        need(os.path.join(args.npm_dir, "node_modules", "playwright-core", "package.json"),
             "npm playwright-core")
        node = shutil.which("node") or shutil.which("nodejs")
        if not node:
            sys.exit("node not found (Debian package nodejs)")
        home = tmpdir("home-")
        profile = tmpdir("chromium-profile-")
        self.scratch = [home, profile]  # removed by close()
        env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
                   XDG_CACHE_HOME=os.path.join(home, ".cache"), PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1")
        self.timeout = timeout
        self.started = time.time()
        self.proc = subprocess.Popen(
            [node, AGENT, os.path.join(args.npm_dir, "node_modules", "playwright-core"),
             args.chromium, profile],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True, bufsize=1)
        self.next_id = 0
        ready = self._read(0)
        if not ready.get("ok"):
            sys.exit("browser agent did not start: %r" % ready)

    def _read(self, want_id):
        # The agent answers in order; a reply that never comes is a hang.
        box = []
        t = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()), daemon=True)
        t.start()
        t.join(self.timeout)
        if not box or not box[0]:
            self.kill()
            sys.exit("browser agent: no reply to request %d within %ds (exit %r)"
                     % (want_id, self.timeout, self.proc.poll()))
        reply = json.loads(box[0])
        if reply.get("id") != want_id:
            sys.exit("browser agent: reply %r to request %d" % (reply, want_id))
        return reply

    def call(self, op, **kw):
        """Runs one op; raises RuntimeError with the agent's message on failure."""
        self.next_id += 1
        kw.update(id=self.next_id, op=op)
        self.proc.stdin.write(json.dumps(kw) + "\n")
        self.proc.stdin.flush()
        reply = self._read(self.next_id)
        if not reply["ok"]:
            raise RuntimeError("%s: %s" % (op, reply["error"]))
        return reply["result"]

    def eval(self, fn, arg=None):
        return self.call("eval", fn=fn, arg=arg)

    def wait_for(self, fn, arg=None, timeout=10000):
        return self.call("wait_for", fn=fn, arg=arg, timeout=timeout)

    def errors(self):
        """Console errors and page errors since the last call."""
        return [m for m in self.call("log") if m["type"] in ("error", "pageerror")]

    def screenshot(self, name, full=False):
        """A PNG in the test's outputs folder, copied to /tmp/browser-shots."""
        out_dir = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR") or SHOTS
        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, name)
        self.call("screenshot", path=path, full=full)
        try:
            os.makedirs(SHOTS, exist_ok=True)
            if os.path.abspath(out_dir) != SHOTS:
                shutil.copyfile(path, os.path.join(SHOTS, name))
        except OSError as e:  # only a convenience: never a failure
            print("note: cannot copy %s to %s: %s" % (name, SHOTS, e), file=sys.stderr)
        return path

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"id": -1, "op": "quit"}) + "\n")
                self.proc.stdin.close()
                self.proc.wait(20)
            except (OSError, subprocess.TimeoutExpired):
                self.kill()
        for d in self.scratch:
            shutil.rmtree(d, ignore_errors=True)


def short(s, n=80):
    """repr of s, cut to n characters, for messages."""
    r = repr(s)
    return r if len(r) <= n else r[:n - 5] + "...'"


def free_port():
    """A loopback port that was free a moment ago (for servers that take
    a port number rather than a socket; callers retry on a clash)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=30):
    """(status, body text); HTTP errors are returned, not raised."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def wait_http(url, proc, timeout=60):
    """Polls url until it answers 200; False when proc ended or time ran out."""
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            return False
        try:
            if http_get(url, timeout=5)[0] == 200:
                return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    return False


# -- pprof's web UI ------------------------------------------------------------

# The boxes of pprof's flame graph (/ui/flamegraph), in either of the UIs
# Debian ships: Go 1.19's d3 flame graph (an SVG whose boxes have a <title>
# "NAME (P%, VALUE)") or the stack view of later versions (Go 1.24: <div
# class="boxbg"> in #stack-chart, whose title, set when the mouse enters,
# is "VALUE (P%) │ self S │ FULL NAME"). Each box as {name, value, text};
# null until at least n boxes are drawn and the page's text holds one of
# the names (labels come after the boxes).
PPROF_FLAME = r"""([n, names]) => {
  const ready = (boxes) => boxes.length >= n &&
    (!names.length || names.some((x) => document.body.innerText.includes(x))) ? boxes : null;
  const svg = [...document.querySelectorAll("svg g title")].map((e) => e.textContent);
  if (svg.length) {
    return ready(svg.map((t) => {
      const m = /^(.*) \(([^,()]*), ([^,()]*)\)$/s.exec(t);
      return m ? {name: m[1], value: m[3], text: t} : {name: t, value: "", text: t};
    }));
  }
  const divs = [...document.querySelectorAll("#stack-chart .boxbg")];
  return ready(divs.map((d) => {
    d.dispatchEvent(new MouseEvent("mouseenter"));
    const t = d.title;
    d.dispatchEvent(new MouseEvent("mouseleave"));
    const parts = t.split(" \u2502 ");
    const full = parts[parts.length - 1].replace(/\n\(inlined\)$/, "");
    return {name: full, value: parts.length > 1 ? parts[0].replace(/ \([^()]*\)$/, "") : "", text: t};
  }));
}"""

# pprof's memory units (its measurement package): factors of 1024.
PPROF_UNITS = {"B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40, "PB": 1 << 50}


def pprof_flame(br, n=1, names=(), timeout=15000):
    """The boxes of the flame graph open in br (PPROF_FLAME)."""
    return br.wait_for(PPROF_FLAME, [n, list(names)], timeout=timeout)


def pprof_bytes(text):
    """A figure pprof shows ("33197B", "1.18MB") as (bytes, unit size), or
    None: a scaled figure is rounded to two decimals of its unit."""
    m = re.match(r"^\s*([0-9.]+)\s*([kMGTP]?B)\s*$", text or "")
    if not m:
        return None
    return float(m.group(1)) * PPROF_UNITS[m.group(2)], PPROF_UNITS[m.group(2)]


def pprof_same_bytes(shown, want):
    """Whether a figure pprof shows is want bytes (as exact as its rounding)."""
    got = pprof_bytes(shown) if isinstance(shown, str) else None
    if isinstance(want, str):
        w = pprof_bytes(want)
        if not got or not w:
            return False
        return abs(got[0] - w[0]) <= 0.005 * max(got[1], w[1]) + 1e-9
    return bool(got) and abs(got[0] - want) <= 0.005 * got[1] + 1e-9


# -- speedscope's web app ------------------------------------------------------

# A tab of speedscope's view switcher, by its label: its box, to click like a
# user.
SPEEDSCOPE_TAB = r"""(label) => {
  const e = [...document.querySelectorAll("div")].find((d) =>
    d.children.length <= 1 && d.textContent.endsWith(label) && d.textContent.length <= label.length + 4);
  if (!e) return null;
  const r = e.getBoundingClientRect();
  return {x: r.left + r.width / 2, y: r.top + r.height / 2};
}"""

# speedscope shows a profile: its name, a canvas and the view tabs.
SPEEDSCOPE_LOADED = r"""(name) => document.body.innerText.includes(name) &&
  !!document.querySelector("canvas") && document.body.innerText.includes("Sandwich")"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


def speedscope_root(args, prefix):
    """A fresh folder to serve, holding speedscope's app (from npm) as
    speedscope/; returns (folder, app folder)."""
    app = os.path.join(args.npm_dir, "node_modules", "speedscope", "dist", "release")
    need(os.path.join(app, "index.html"), "npm speedscope")
    root = tmpdir(prefix)
    os.symlink(app, os.path.join(root, "speedscope"))
    return root, app


def serve(root):
    """Serves folder root over http://127.0.0.1 on a free port, in a thread;
    returns (the server, to shut down; its base URL)."""
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=root))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, "http://127.0.0.1:%d" % httpd.server_address[1]

def folded_figures(text):
    """{name: [self, total]} of a folded file as speedscope's Sandwich view
    counts them: self where the name is the leaf, total once per stack
    holding it."""
    out = {}
    for ln in text.splitlines():
        stack, count = ln.rsplit(" ", 1)
        frames = stack.split(";")
        for n in set(frames):
            out.setdefault(n, [0, 0])[1] += int(count)
        out[frames[-1]][0] += int(count)
    return out


def sandwich_number(cell):
    """The value of a Sandwich table cell, "1,234 (5.6%)", or None."""
    m = re.match(r"^([0-9,]+) \(", cell)
    return int(m.group(1).replace(",", "")) if m else None
