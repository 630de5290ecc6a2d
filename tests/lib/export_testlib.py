"""Shared helpers of the exporter tests: runfiles, running `ljm convert`, the
corpus, the common steps of the tests through a format's own reader (pprof,
heaptrack_print), and the frame rules of frames.h in Python (an independent
re-statement, used to check the C output). The stream writer (Stream, uleb,
lstr, hostile_stream) is ljmwrite.py's, named here too.

Every check counts in CHECKS (checks.py: "FAIL: what" on stderr as it
happens); tests end with a summary and exit 1 when anything failed, so a
failing assertion can never pass.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

from checks import EXPORTER, Checks
from ljmwrite import Stream, hostile_stream, lstr, uleb, write_hostile  # noqa: F401  (for the tests)
import ljmwrite
from testlib import run

WORKSPACE = "ljmkit"
CHECKS = Checks(echo=EXPORTER, file=sys.stderr)
check = CHECKS.check
summary = CHECKS.summary
finish = CHECKS.finish_checked


def runfiles_root():
    return os.path.join(os.environ["TEST_SRCDIR"], WORKSPACE)


# The independent reader as a command: `READER_PY FILE` prints its totals.
READER_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ljmread.py")


def ljm_binary():
    return os.path.join(runfiles_root(), "cli", "ljm")


def corpus():
    """Every .ljm profile under testdata/, sorted; fails when there are none."""
    root = os.path.join(runfiles_root(), "testdata")
    found = []
    for d, _, files in os.walk(root, followlinks=True):
        found += [os.path.join(d, f) for f in files if f.endswith(".ljm")]
    if len(found) < 20:
        sys.exit("corpus not found or too small under %s (%d files)" % (root, len(found)))
    return sorted(found)


def is_bad_input(path):
    """Streams the reference tool rejects (synthetic/err_*)."""
    return os.path.basename(path).startswith("err_")


def tmpdir():
    return tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))


def convert(profile, out, fmt=None, extra=()):
    """Runs ljm convert; returns (returncode, stdout bytes, stderr text)."""
    cmd = [ljm_binary(), "convert"]
    if fmt:
        cmd += ["-f", fmt]
    cmd += list(extra) + ["-o", out, profile]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def convert_ok(profile, out, fmt=None, extra=()):
    """Converts; checks that good input succeeds and bad input fails
    cleanly. Returns the output bytes, or None when there is nothing to check."""
    rc, so, se = convert(profile, out, fmt, extra)
    if rc != 0:
        check(is_bad_input(profile),
              "%s -f %s %s: exit %d: %s" % (profile, fmt, " ".join(extra), rc, se.strip()))
        check(se.strip() != "", "%s: failed without a message" % profile)
        return None
    if out == "-":
        return so
    with open(out, "rb") as f:
        return f.read()


VALUE_KINDS = ["alloc_bytes", "alloc_count", "inuse_bytes", "inuse_count", "peak_bytes"]

# -- Tests through a format's own reader (pprof, heaptrack_print) -----------
# These take the binary, the independent reader tests/lib/ljmread.py and the corpus
# folders as arguments, and count every check.


def record_heap_app(ljm, app_dir, work, n=400):
    """A heap snapshot of testdata/heap's app.lua (n sessions) under the
    system's LuaJIT: copies app.lua and sessmod.lua into work and runs `ljm
    record` there. Returns (snapshot path, the CompletedProcess)."""
    import shutil
    for f in ("app.lua", "sessmod.lua"):
        shutil.copy(os.path.join(app_dir, f), work)
    snap = os.path.join(work, "app.ljh")
    r = run([os.path.abspath(ljm), "record", "-o", os.path.join(work, "app.ljm"), "app.lua", str(n), snap],
            timeout=300, cwd=work)
    return snap, r


def reader_cases(args):
    """From args LJM_BINARY LJM_TOTALS_PY CORPUS_DIR...: returns (binary,
    temporary folder, path of the hostile-names stream, cases), cases being
    (profile, figures of the independent reader) for every .ljm file under
    the folders (sorted; checked to be there), then for the hostile stream
    (ljmwrite.nasty_stream()), written to the temporary folder."""
    ljm, totals_py, dirs = args[0], args[1], args[2:]
    files = sorted(f for d in dirs for f in glob.glob(os.path.join(d, "**", "*.ljm"),
                                                      recursive=True))
    check(len(files) > 0, "no corpus files in %s" % dirs)
    tmp = os.environ.get("TEST_TMPDIR") or tempfile.mkdtemp()
    nasty = os.path.join(tmp, "nasty.ljm")  # names that break naive writers
    with open(nasty, "wb") as fh:
        fh.write(ljmwrite.nasty_stream())
    cases = [(f, json.loads(run([sys.executable, totals_py, f]).stdout))
             for f in files + [nasty]]
    return ljm, tmp, nasty, cases


def check_decoder(ljm, name, f, want):
    """The decoder's own totals (JSON export) agree with the independent
    reader, so a mismatch in the client's figures points at the exporter;
    so does the sampling rate."""
    r = run([ljm, "convert", "-f", "json", "-o", "-", f])
    doc = json.loads(r.stdout) if r.returncode == 0 else {}
    got = doc.get("totals", {})
    keys = ("alloc_count", "alloc_bytes", "inuse_count", "inuse_bytes", "peak_bytes")
    check(all(fig_ok(want, k, got.get(k)) for k in keys),
          "%s: decoder totals %s, independent reader %s"
          % (name, {k: got.get(k) for k in keys}, {k: want[k] for k in keys}))
    # temporaries: the reader's replay of heaptrack's rule; none when sampled
    temp = got.get("temp_count", "missing")
    check(temp == (None if want["sample_rate"] else want["temporary"]),
          "%s: decoder temp_count %r, independent reader %r" % (name, temp, want["temporary"]))
    rate = doc.get("stream", {}).get("sample_rate", "missing")
    check(rate == want["sample_rate"], "%s: stream.sample_rate %r, the reader says %r"
          % (name, rate, want["sample_rate"]))


def convert_vs_reader(ljm, fmt, out, f, name, want):
    """Converts f to out (a fresh file; fmt None: out's suffix picks the
    format) and checks rc against the independent reader's status in want:
    an invalid stream must fail, a cut one may fail with a message, anything
    else must convert and have the reader's totals (check_decoder). True
    when out holds a conversion to check further."""
    if os.path.exists(out):
        os.remove(out)
    c = run([ljm, "convert"] + (["-f", fmt] if fmt else []) + ["-o", out, f])
    if want["status"] == "error":
        check(c.returncode != 0 and c.stderr.strip() != "",
              "%s: invalid stream: rc %d, message %r" % (name, c.returncode, c.stderr.strip()))
        return False
    if want["status"] == "truncated" and c.returncode != 0:
        check(c.stderr != "", "%s: cut stream refused without a message" % name)
        return False
    if not check(c.returncode == 0, "%s: convert rc=%d: %s"
                 % (name, c.returncode, c.stderr.strip())):
        return False
    check_decoder(ljm, name, f, want)
    return True


# -- Sampled streams (decoder/EXTENSION.md, "Sampling") ---------------------

SAMPLED = "sampled.ljm"  # testdata/ext/make_sampled.py


def reader_figures(path):
    """tests/lib/ljmread.py's totals of path (in the test's runfiles)."""
    r = run([sys.executable, READER_PY, path])
    return json.loads(r.stdout)


def fig_ok(want, key, got):
    """got is the reader's figure key (want: tests/lib/ljmread.py totals):
    equal, or for a count of a sampled stream within the sums of the
    counts rounded down and up (the coin is the model's)."""
    lo, hi = want.get("count_bounds", {}).get(key, (want[key], want[key]))
    return isinstance(got, int) and lo <= got <= hi


def sampled_note(rate):
    """The sentence that marks a sampled stream's estimates (README,
    "Sampled recording"), the rate as people write it; None when exact."""
    if not rate:
        return None
    n, unit = rate, "B"
    for u, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if rate % (1 << shift) == 0:
            n, unit = rate >> shift, u
            break
    return "estimates from a sampled recording (one allocated byte in %d %s)" % (n, unit)


# -- The frame rules of exporters/common/frames.h, restated ----------------

_PERL_SPACE = set("\x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | {
    chr(c) for c in range(0x2000, 0x200B)}


def clean(name, folded):
    """ljm_text_clean on a name already decoded with one U+FFFD per bad byte."""
    out = []
    for ch in name:
        c = ord(ch)
        if c in (0xFFFE, 0xFFFF):
            out.append("\ufffd")
        elif c < 0x20 or 0x7F <= c <= 0x9F:
            out.append("_")
        elif folded and ch == ";":
            out.append(":")
        elif folded and ch in _PERL_SPACE:
            out.append("_")
        else:
            out.append(ch)
    return "".join(out) or "?"


def fix_last(frame):
    """ljm_frame_fix_last: a trailing number may not follow a space."""
    i = len(frame)
    while i > 0 and (frame[i - 1] in "0123456789." or ord(frame[i - 1]) >= 0x80):
        i -= 1
    if 0 < i < len(frame) and frame[i - 1] == " ":
        frame = frame[:i - 1] + "_" + frame[i:]
    return frame


def base(path):
    """The last component of a file's path: frame names carry it (frames.h)."""
    return path.rpartition("/")[2]


def _plain_frames(site):
    k = site["kind"]
    if k == "lua":
        if site["func_from"] == "builtin":
            return ["[builtin]", site["func"]]
        return [site["file"] or "?", site["func"], "%s:%d" % (base(site["file"]), site["line"])]
    if k == "c":
        return ["[C]", site["func"]]
    return ["INTERNAL"]


def site_frames(site, sites):
    """Raw frame path of a JSON site object (frames.h hierarchy): Lua
    file;function;file:line, [builtin];function, [C];function, INTERNAL, and
    a trace (its func: TRACE [n] and where it starts) below the path of the
    site it starts at."""
    if site["kind"] != "trace":
        return _plain_frames(site)
    start = None if site["trace_start"] is None else sites[site["trace_start"]]
    root = _plain_frames(start) if start and start["kind"] in ("lua", "c") else ["[JIT]"]
    return root + [site["func"]]


_MARKERS = {"resume": "[coroutine]", "tail": "[tail call]", "cut": "[...]"}


def _stack_frame(node, sites):
    if node["kind"] != "frame":
        return _MARKERS[node["kind"]]
    s = sites[node["site"]]
    if s["kind"] == "lua":
        if s["func_from"] in ("source", "main", "defined"):
            return "%s (%s)" % (s["func"], base(s["file"]))
        return s["func"]
    return s["func"]


def _chain(doc, i):
    """Nodes of node i's path, leaf first. A charged site's leaf (no stream
    id, a parent) that is a Lua line shows as its line alone (frames.h), so
    its function frame is left out here."""
    nodes, sites = doc["nodes"], doc["sites"]
    chain = []
    k = i
    while k is not None:
        chain.append(nodes[k])
        k = nodes[k]["parent"]
    n = nodes[i]
    if (n["kind"] == "frame" and not n["stream_id"] and n["parent"] is not None and
            sites[n["site"]]["kind"] == "lua" and sites[n["site"]]["func_from"] != "builtin"):
        chain = chain[1:]
    return chain


def node_frames(doc, i):
    """Raw frame path of node i of a JSON document (frames.h): a site on its
    own in a standard stream; else the stack root first, then the leaf's
    line when the leaf is a Lua function."""
    nodes, sites = doc["nodes"], doc["sites"]
    n = nodes[i]
    if not doc["stream"]["stacks"]:
        return site_frames(sites[n["site"]], sites)
    chain = _chain(doc, i)
    out = [_stack_frame(x, sites) for x in reversed(chain)]
    if n["kind"] == "frame":
        s = sites[n["site"]]
        if s["kind"] == "lua" and s["func_from"] != "builtin":
            out.append("%s:%d" % (base(s["file"]), s["line"]))
    return out


def has_file(s):
    """A site whose frames have a source file (frames.h): a Lua chunk that
    names a file or a source, not a loaded string."""
    return (s["kind"] == "lua" and s["func_from"] != "builtin" and s["file"] != "" and
            s["chunk"][:1] in ("@", "="))


def _func_line(s):
    return 1 if s["func_from"] == "main" else s["func_line"]


def _plain_places(s):
    if s["kind"] == "lua":
        if s["func_from"] == "builtin":
            return [(None, 0), (None, 0)]
        return [(s, 0), (s, _func_line(s)), (s, s["line"])]
    if s["kind"] == "c":
        return [(None, 0), (None, 0)]
    return [(None, 0)]


def node_places(doc, i):
    """(site, line) of each frame node_frames gives for node i: the site
    whose file the frame is in (None: no file) and its line (0: none), as
    the speedscope and heap-profile exporters write them."""
    nodes, sites = doc["nodes"], doc["sites"]
    n = nodes[i]
    if not doc["stream"]["stacks"]:
        s = sites[n["site"]]
        if s["kind"] != "trace":
            return _plain_places(s)
        st = None if s["trace_start"] is None else sites[s["trace_start"]]
        root = _plain_places(st) if st and st["kind"] in ("lua", "c") else [(None, 0)]
        return root + [(None, 0)]
    chain = _chain(doc, i)
    out = []
    for x in reversed(chain):
        s = sites[x["site"]] if x["kind"] == "frame" else None
        out.append((s, _func_line(s)) if s and has_file(s) else (None, 0))
    if n["kind"] == "frame":
        s = sites[n["site"]]
        if s["kind"] == "lua" and s["func_from"] != "builtin":
            out.append((s, s["line"]))
    return out

def node_context(doc, i):
    """Markdown Context of node i: labels innermost first (a standard
    stream: the site's label alone)."""
    nodes, sites = doc["nodes"], doc["sites"]
    out = []
    k = i
    while k is not None:
        n = nodes[k]
        out.append(_MARKERS[n["kind"]] if n["kind"] != "frame" else site_label(sites[n["site"]], sites))
        if not doc["stream"]["stacks"]:
            break
        k = n["parent"]
    return out


def _plain_label(site):
    if site["kind"] == "lua":
        if site["func_from"] == "builtin":
            return site["func"] + " [builtin]"
        return "%s (%s:%d)" % (site["func"], base(site["file"]), site["line"])
    if site["kind"] == "c":
        return site["func"] + " [C]"
    return "INTERNAL"


def site_label(site, sites):
    """One-line label of a JSON site object (ljm_site_label)."""
    if site["kind"] != "trace":
        return _plain_label(site)
    label = site["func"]
    start = None if site["trace_start"] is None else sites[site["trace_start"]]
    if start and start["kind"] == "lua" and start["func_from"] != "builtin":
        label += " (in %s)" % start["func"]
    return label


def folded_stack(frames):
    f = [clean(x, True) for x in frames]
    f[-1] = fix_last(f[-1])
    return ";".join(f)


def load_json(profile, d):
    """The profile's JSON export, parsed (None for rejected input)."""
    import json
    out = os.path.join(d, "model.json")
    data = convert_ok(profile, out, "json")
    if data is None:
        return None
    return json.loads(data.decode("utf-8"))


def value_of(fig, kind):
    return fig[kind]
