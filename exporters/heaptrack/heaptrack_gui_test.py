#!/usr/bin/env python3
"""heaptrack_gui_test.py -- opens every converted corpus profile in the real
heaptrack_gui (Debian's heaptrack-gui 1.4.0) on virtual X servers.

Usage: heaptrack_gui_test.py [--heap-app DIR] LJM_BINARY LJM_TOTALS_PY CORPUS_DIR...

The profiles are those heaptrack_test converts (export_testlib.reader_cases:
every .ljm the independent reader accepts, plus the hostile-names stream),
each written as .heaptrack.gz and .heaptrack.zst by `ljm convert`. Each file
is opened in its own heaptrack_gui process; SLOTS of them run at once, each
on its own Xvfb (-nolisten tcp, display number chosen by the server with
-displayfd, screenshots read from its -fbdir framebuffer file), with a fresh
HOME and XDG_RUNTIME_DIR per slot so no user configuration leaks in. For
each file:
  * the GUI is still running MIN_ALIVE seconds after its start, when it is
    closed (heaptrack_gui 1.4.0 dies with SIGSEGV, exit 139 in a shell,
    within a second of opening a file whose allocation infos are not first
    used in the order 0, 1, 2, ...: output-formats.md B.6 item 10);
  * its main window "Heaptrack - <file name>" is mapped (xwininfo);
  * once the window has stopped changing, its screenshot shows the Summary
    tab with data (see judge()): many colours and some dark text (not blank),
    the three text blocks of the summary header, an indented value under
    "debuggee" (the file's X line; the text itself cannot be read without
    OCR), and a location listed in exactly those of the four tables below
    (peak, leaked, allocations, temporary) where heaptrack_gui's own rules,
    replayed on the file by listed(), say there is one;
  * (heaptrack_gui's Temporary figures) its rule replayed on the file counts
    as many temporary allocations as ljm does (exact streams), but for what
    the file's `# ljm:` line says heaptrack miscounts;
  * (a sanity check of the file the GUI reads) its number of `+` lines is
    the independent reader's allocation count (the samples of a sampled
    stream), and the peak it shows is the reader's (an estimate when
    sampled).
With --heap-app, also the heap as a flame graph: a snapshot of DIR/app.lua
(heap_job()) converted to .heaptrack.zst, opened with its tabs as a stream
with call stacks is, after checking that it holds one allocation per object
of the snapshot and its bytes (tests/lib/ljhread.py reads the .ljh).
For the files of a stream with real call stacks (the JSON export says
"stream": {"stacks": true}), after the Summary the test clicks, as a user
would (pointer and button 1 through the X server's XTEST extension, libXtst
through ctypes; the tab found in the tab bar of the Summary screenshot),
  * the "Flame Graph" tab: once the window has stopped changing, that tab
    is the current one and the graph has bars in at least DEEP rows (see
    flame_rows(): bands of coloured pixels, whatever the colours and
    fonts), as many as the file's peak call tree is deep (peak_tree_depth());
  * then the "Bottom-Up" tab: the current one, its tree lists at least one
    row and no more than the file has leaf symbols (see tree_rows()).
Controls, so that these checks can fail: the blank screen of a fresh Xvfb
must be judged blank, and a GUI showing the empty summary of a zero-byte
.heaptrack.zst (which heaptrack_gui opens without an error, showing zeros)
must fail the debuggee and table checks, and only those, and its Bottom-Up
tab must show no rows. The Flame Graphs of the standard streams with the most
calls among those whose peak call tree is one level deep and two levels
deep must be seen with exactly that many rows of bars, and fail the check
of a stream with call stacks for that reason only.
Every window is saved as PNG under $TEST_UNDECLARED_OUTPUTS_DIR, and every
tab clicked as <window>-flame-graph.png or -bottom-up.png; the first two
windows and every PNG of a stream with call stacks also replace the PNGs in
/tmp/heaptrack-shots/. Every process started here is killed on the way out,
also on failure or SIGTERM. Ends with "N passed, N failed".
"""
import ctypes
import gzip
import json
import mmap
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib

import ljhread
import xvfb
import export_testlib as T
from export_testlib import check

SLOTS = 6               # GUIs (and Xvfb servers) at once
SCREEN = (1600, 1000)   # wide enough for the default window (1332x896)
MIN_ALIVE = 4.0         # s: the known crash comes within 1 s of the start
STABLE = 1.2            # s without a change on screen = loading finished
WRONG = 8.0             # s without a change on a screen that fails judge()
GIVE_UP = 45.0          # s per file
TICK = 0.3              # s between looks
SHOTS = "/tmp/heaptrack-shots"
# heaptrack_gui 1.4.0's tabs, in their order
TABS = ("Summary", "Bottom-Up", "Caller / Callee", "Top-Down", "Flame Graph", "Consumed",
        "Allocations", "Temporary Allocations", "Sizes")
# The tabs every build shows; the chart tabs after them come with KChart
# (Debian 12's heaptrack-gui has them, Debian 13's does not).
TABS_ALWAYS = 5
FLAME, BOTTOM_UP = "Flame Graph", "Bottom-Up"
TAB_STABLE = 0.8        # s without a change after a click = the tab is drawn
DEEP = 3                # rows of bars a flame graph of real call stacks has
CHROMA = 40             # max - min channel from which a pixel is coloured

PROCS = []              # every Popen started here, for cleanup()


# -- Processes ---------------------------------------------------------------

def _child_setup():
    """In the child: die with the test (PR_SET_PDEATHSIG), no core files."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def spawn(cmd, log, **kw):
    """Starts cmd in its own session (so its whole group can be killed)."""
    with open(log, "ab") as out:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                             stderr=subprocess.STDOUT, start_new_session=True,
                             preexec_fn=_child_setup, **kw)
    PROCS.append(p)
    return p


def stop(p, grace=2.0):
    """Ends p and its process group: SIGTERM, then SIGKILL. Returns the
    status p had before it was stopped (None when it was still running)."""
    before = p.poll()
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            p.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue
    if p in PROCS:
        PROCS.remove(p)
    return before


def cleanup():
    while PROCS:
        stop(PROCS[-1], grace=0.5)


def status_text(rc):
    if rc is not None and rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = "signal %d" % -rc
        return "killed by %s (exit %d in a shell)%s" % (
            name, 128 - rc, ": the known crash, formats doc B.6 item 10"
            if rc == -signal.SIGSEGV else "")
    return "exit status %s" % rc


# -- Xvfb and its framebuffer ---------------------------------------------------

class Xvfb:
    """An Xvfb server whose screen is the XWD-format file <dir>/Xvfb_screen0."""

    def __init__(self, workdir):
        self.dir = workdir
        fbdir = os.path.join(workdir, "fb")
        os.makedirs(fbdir, exist_ok=True)
        rfd, wfd = os.pipe()
        try:
            self.proc = spawn(["Xvfb", "-displayfd", str(wfd), "-screen", "0",
                               "%dx%dx24" % SCREEN, "-dpi", "96", "-nolisten", "tcp",
                               "-nocursor", "-s", "0", "-fbdir", fbdir],
                              os.path.join(workdir, "xvfb.log"), pass_fds=(wfd,))
        finally:
            os.close(wfd)
        self.display = xvfb.display(rfd)
        if not self.display:
            with open(os.path.join(workdir, "xvfb.log"), errors="replace") as fh:
                raise RuntimeError("Xvfb did not start: %s" % fh.read()[-500:])
        with open(os.path.join(fbdir, "Xvfb_screen0"), "rb") as fh:
            self.fb = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        h = struct.unpack(">25I", self.fb[:100])  # XWDFileHeader, big-endian
        header, width, height, bpl, bpp, ncolors = h[0], h[4], h[5], h[12], h[11], h[19]
        if bpp != 32 or h[7] != 0 or (h[14], h[15], h[16]) != (0xFF0000, 0xFF00, 0xFF):
            raise RuntimeError("unexpected framebuffer format %s" % (h,))
        self.size, self.bpl = (width, height), bpl
        self.offset = header + 12 * ncolors

    def grab(self, x, y, w, h):
        """The pixels of a screen rectangle (clipped), as a Shot."""
        x, y = max(x, 0), max(y, 0)
        w, h = min(w, self.size[0] - x), min(h, self.size[1] - y)
        rows = []
        for row in range(y, y + h):
            start = self.offset + row * self.bpl + 4 * x
            rows.append(self.fb[start:start + 4 * w])
        return Shot(w, h, b"".join(rows))

    def close(self):
        self.fb.close()
        stop(self.proc)


class Shot:
    """A screenshot: w x h pixels of 4 bytes, B G R X (the server's order)."""

    def __init__(self, w, h, data):
        self.w, self.h, self.data = w, h, data

    def png(self, path):
        rgb = bytearray(3 * self.w * self.h)
        rgb[0::3], rgb[1::3], rgb[2::3] = self.data[2::4], self.data[1::4], self.data[0::4]
        stride = 3 * self.w
        raw = b"".join(b"\0" + rgb[i:i + stride] for i in range(0, len(rgb), stride))

        def chunk(kind, body):
            return (struct.pack(">I", len(body)) + kind + body +
                    struct.pack(">I", zlib.crc32(kind + body)))
        with open(path, "wb") as fh:
            fh.write(b"\x89PNG\r\n\x1a\n" +
                     chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)) +
                     chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


# -- What the screenshot shows ------------------------------------------------

def text_lines(dark, w, x0, x1, y0, y1):
    """Runs of rows in [y0, y1) with a dark pixel in columns [x0, x1):
    [(top, bottom, leftmost x of a dark pixel)]."""
    lines = []
    for y in range(y0, y1):
        left = dark.find(1, y * w + x0, y * w + x1)
        if left < 0:
            continue
        left -= y * w
        if lines and lines[-1][1] == y:
            top, _, lx = lines[-1]
            lines[-1] = (top, y + 1, min(lx, left))
        else:
            lines.append((y, y + 1, left))
    return lines


def rules(green, w, h):
    """Rows that are a horizontal line across most of the window: one shade
    darker than the background on more than 80% of the row."""
    found = []
    for y in range(h):
        row = green[y * w:(y + 1) * w]
        c = row[w // 2]
        if c < 230 and row.count(c) > 0.8 * w:
            found.append(y)
    return found


def mask(channel, lo, hi):
    """A byte per pixel: 1 where lo <= channel value <= hi, else 0."""
    return channel.translate(bytes(int(lo <= v <= hi) for v in range(256)))


def judge(shot):
    """What a window screenshot shows. Returns a dict:
    colours       distinct colours;
    dark          share of dark (text) pixels;
    blocks        text lines in the left, centre and right third of the
                  summary header (between the tab bar and its separator);
    values        indented (value) lines of the left block, which holds
                  debuggee / total runtime / total system memory;
    debuggee      the first left-block line is a label with a value under it;
    rows          per table below the header (Peak Contributions, Largest
                  Memory Leaks, Most Memory Allocations, Most Temporary
                  Allocations): whether it lists a location;
    frame         the row of the tab frame's top edge, under the tab bar
                  (only when the header band was found)."""
    w, h = shot.w, shot.h
    px = memoryview(shot.data).cast("I")
    green = shot.data[1::4]
    dark = mask(green, 0, 127)
    res = {"colours": len(set(px)), "dark": dark.count(1) / max(1, w * h),
           "blocks": [0, 0, 0], "values": 0, "debuggee": False, "rows": [False] * 4}
    # The header band: between the first two full-width rules below the
    # menu bar (the tab frame's top edge and the summary's separator).
    band = []
    for y in rules(green, w, h):
        if y <= 0.03 * h:
            continue
        if band and y == band[-1][1]:
            band[-1][1] = y + 1
        else:
            band.append([y, y + 1])
    if len(band) < 2 or band[1][0] > 0.5 * h:
        return res
    top, bottom = band[0][1], band[1][0]
    res["frame"] = band[0][0]
    # Columns with a 10 px margin each side: a long debuggee line can reach
    # past a third of the window, right up to the next column's labels.
    for i in range(3):
        res["blocks"][i] = len(text_lines(dark, w, i * w // 3 + (10 if i else 0),
                                          (i + 1) * w // 3 - 10, top, bottom))
    left = text_lines(dark, w, 0, w // 3, top, bottom)
    if left:
        margin = min(lx for _, _, lx in left)
        indented = [lx > margin + 10 for _, _, lx in left]
        res["values"] = sum(indented)
        res["debuggee"] = len(left) >= 2 and not indented[0] and indented[1]
    # The four tables: a title line, a header line, then the first row
    # right under the header when the table has an entry.
    for i in range(4):
        x0, x1 = i * w // 4, (i + 1) * w // 4
        lines = text_lines(dark, w, x0 + 12, x1 - 12, bottom + 1, h)
        res["rows"][i] = len(lines) >= 3 and lines[2][0] - lines[1][1] < 20
    return res


def looks_blank(j):
    return j["colours"] < 16 or j["dark"] < 0.001


def summary_problems(j, want_rows):
    """Why judge()'s result j is not a Summary tab with data; want_rows:
    per table, whether it must list a location."""
    bad = []
    if looks_blank(j):
        bad.append("blank (%d colours, %.3f%% dark)" % (j["colours"], 100 * j["dark"]))
    if min(j["blocks"]) < 4:
        bad.append("no summary header (text lines left/centre/right %s)" % j["blocks"])
    if not j["debuggee"] or j["values"] < 3:
        bad.append("no debuggee value (%d value lines)" % j["values"])
    if j["rows"] != want_rows:
        bad.append("tables with rows %s, expected %s" % (j["rows"], want_rows))
    return bad


# -- The other tabs ------------------------------------------------------------

def tab_bar(shot, frame):
    """The tabs of a screenshot whose tab frame's top edge is row frame:
    {"tabs": [(x0, x1)] of the first len(TABS), "top": their top row,
    "scan": the row read, "frame": frame}, or None when fewer than the
    TABS_ALWAYS tabs are found. The row just
    above the frame crosses every tab under its label: a tab is the span
    between two separators, pixels darker than the row's median (the
    tabs' fill) by more than 24."""
    w, green = shot.w, shot.data[1::4]
    y = frame - 2
    if y < 1:
        return None
    row = green[y * w:(y + 1) * w]
    fill = sorted(row)[w // 2]
    seps = []
    for x in range(w):
        if row[x] < fill - 24:
            if seps and seps[-1][1] == x:
                seps[-1][1] = x + 1
            else:
                seps.append([x, x + 1])
    tabs = [(a[1], b[0]) for a, b in zip(seps, seps[1:]) if b[0] - a[1] >= 10]
    if len(tabs) < TABS_ALWAYS:
        return None
    top, x = y, seps[0][0]
    while top > 0 and green[(top - 1) * w + x] < fill - 24:
        top -= 1
    return {"tabs": tabs[:len(TABS)], "top": top, "scan": y, "frame": frame}


def selected_tab(shot, bar):
    """Index in TABS of the tab drawn as the current one (the brightest
    along the row under the labels, by 8 or more), or None."""
    w, green = shot.w, shot.data[1::4]
    row = green[bar["scan"] * w:(bar["scan"] + 1) * w]
    light = [sum(row[a:b]) / (b - a) for a, b in bar["tabs"]]
    best = max(range(len(light)), key=light.__getitem__)
    others = sorted(light[:best] + light[best + 1:])
    return best if light[best] >= others[len(others) // 2] + 8 else None


def colour_mask(shot, y0):
    """A byte per pixel from row y0 down: 1 where the colour is far from
    grey (its largest and smallest channels differ by CHROMA or more).
    Widgets, text and the view's background are shades of grey; every bar
    of the flame graph is coloured, whatever colour it gets."""
    px = memoryview(shot.data).cast("I")[y0 * shot.w:]
    colourful = set()
    for c in set(px):
        b, g, r = c & 255, (c >> 8) & 255, (c >> 16) & 255
        if max(r, g, b) - min(r, g, b) >= CHROMA:
            colourful.add(c)
    return bytes(c in colourful for c in px)


def flame_rows(shot, y0):
    """The rows of bars of a Flame Graph tab below row y0, as [(top,
    bottom)]: bands of consecutive pixel rows with 12 or more coloured
    pixels (colour_mask), at least 8 rows high, with a run of 16 coloured
    pixels in one of them. Rows of bars are one blank pixel row apart, a
    bar is as high as a line of text plus 4 and fills its width (its label
    is black text inside it), while coloured fringes of text never run 16
    pixels and a focus frame is 2 coloured pixels a row."""
    w = shot.w
    mask = colour_mask(shot, y0)
    run = b"\1" * 16
    bands = []
    for y in range(shot.h - y0):
        row = mask[y * w:(y + 1) * w]
        if row.count(1) < 12:
            continue
        if bands and bands[-1][1] == y0 + y:
            bands[-1][1] += 1
        else:
            bands.append([y0 + y, y0 + y + 1, False])
        bands[-1][2] |= run in row
    return [(top, bottom) for top, bottom, long in bands if long and bottom - top >= 8]


def tree_rows(shot, y0):
    """Rows listed by the tree view of a Bottom-Up tab below row y0, or None
    when its frame and header were not found. Lines across half the window
    or more (one colour, darker than the widgets' fill) are, from the top,
    the tree's upper edge, the bottom of its header and the tree's lower
    edge; a row is a line of dark text between the last two, in the left 40%
    of the window (the Location column)."""
    w, h = shot.w, shot.h
    px = memoryview(shot.data).cast("I")
    green = shot.data[1::4]
    edges, previous = [], False
    for y in range(y0, h):
        mid = y * w + w // 2
        line = False
        if green[mid] < 0xd8:
            a = b = mid
            while a > y * w and px[a - 1] == px[mid]:
                a -= 1
            while b < (y + 1) * w - 1 and px[b + 1] == px[mid]:
                b += 1
            line = b - a + 1 >= w // 2
        if line and not previous:
            edges.append(y)
        previous = line
    if len(edges) < 3:
        return None
    dark = mask(green, 0, 127)
    return len(text_lines(dark, w, 0, int(0.4 * w), edges[1] + 1, edges[2]))


def judge_tab(shot, bar, tab):
    """What a screenshot taken after a click on tab shows: {"selected":
    selected_tab(), "count": rows of bars (Flame Graph) or rows of the tree
    (Bottom-Up), None when not found}."""
    y0 = bar["frame"] + 1
    count = len(flame_rows(shot, y0)) if tab == FLAME else tree_rows(shot, y0)
    return {"selected": selected_tab(shot, bar), "count": count}


def tab_problems(v, tab, want, stacked):
    """Why judge_tab()'s result v is not tab showing what the file holds:
    want is the (lo, hi) range of its count (peak_tree_depth() for the
    Flame Graph); stacked asks for a Flame Graph at least DEEP rows deep
    (a stream with real call stacks)."""
    bad = []
    if v["selected"] != TABS.index(tab):
        bad.append("the current tab is %s" % (
            "not recognised" if v["selected"] is None else TABS[v["selected"]]))
    n = v["count"]
    what = "rows of bars" if tab == FLAME else "rows in the tree"
    if n is None:
        bad.append("no tree view with a header found")
    elif not want[0] <= n <= want[1]:
        bad.append("%d %s, the file says %s" % (
            n, what, want[0] if want[0] == want[1] else "%d to %d" % want))
    if stacked and tab == FLAME and (n or 0) < DEEP:
        bad.append("%d %s: not a graph of real call stacks (at least %d expected)"
                   % (n or 0, what, DEEP))
    return bad


_XLIBS = []


def xlibs():
    """The system's libX11 and libXtst (XTEST), through ctypes."""
    if not _XLIBS:
        x11, xtst = ctypes.CDLL("libX11.so.6"), ctypes.CDLL("libXtst.so.6")
        dpy, ip = ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)
        x11.XOpenDisplay.restype = dpy
        x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
        x11.XSync.argtypes = [dpy, ctypes.c_int]
        x11.XCloseDisplay.argtypes = [dpy]
        xtst.XTestQueryExtension.argtypes = [dpy, ip, ip, ip, ip]
        xtst.XTestFakeMotionEvent.argtypes = [dpy, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                              ctypes.c_ulong]
        xtst.XTestFakeButtonEvent.argtypes = [dpy, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
        _XLIBS.extend((x11, xtst))
    return _XLIBS


def click(display, x, y):
    """What a user's mouse does: through the server's XTEST extension the
    pointer goes to (x, y) on the screen, button 1 is pressed and released
    there, and the pointer is parked in the screen's corner, off the
    window (no hover highlight or tooltip on the screenshot). Raises
    OSError when it cannot."""
    x11, xtst = xlibs()
    dpy = x11.XOpenDisplay(display.encode())
    if not dpy:
        raise OSError("cannot connect to %s" % display)
    try:
        n = [ctypes.c_int() for _ in range(4)]
        if not xtst.XTestQueryExtension(dpy, *[ctypes.byref(v) for v in n]):
            raise OSError("%s has no XTEST extension" % display)
        xtst.XTestFakeMotionEvent(dpy, 0, x, y, 0)
        xtst.XTestFakeButtonEvent(dpy, 1, 1, 0)
        xtst.XTestFakeButtonEvent(dpy, 1, 0, 0)
        xtst.XTestFakeMotionEvent(dpy, 0, SCREEN[0] - 1, SCREEN[1] - 1, 0)
        x11.XSync(dpy, 0)
    finally:
        x11.XCloseDisplay(dpy)


# -- The expected tables -----------------------------------------------------

def decompress(path):
    with open(path, "rb") as fh:
        data = fh.read()
    if path.endswith(".gz"):
        return gzip.decompress(data)
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dcq"], input=data, capture_output=True,
                              check=True).stdout
    return data


def s64(v):
    """v as a wrapped int64, like heaptrack's sums."""
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >> 63 else v


def parse(text):
    """The parts of a heaptrack file the checks replay: (frames, traces,
    infos, events). frames[i] is the symbol (function, module) of `i` line
    i; traces[t] is (frame, parent trace) of `t` line t, 0 being the root;
    infos[n] is (size, trace) of the n-th `a` line; events are (True for
    `+` else False, info index), in file order."""
    frame, trace, info, events = [None], [(0, 0)], [], []
    for line in text.split(b"\n"):
        mode = line[:2]
        if mode in (b"+ ", b"- "):
            events.append((mode == b"+ ", int(line[2:], 16)))
        elif mode in (b"i ", b"t ", b"a "):
            f = [int(x, 16) for x in line[2:].split(b" ")]
            if mode == b"i ":
                frame.append((f[2] if len(f) > 2 else 0, f[1]))
            elif mode == b"t ":
                trace.append((f[0], f[1]))
            else:
                info.append((f[0], f[1]))
    return frame, trace, info, events


def peak_at(parsed):
    """(peak, index of the event at which the total first reached it; -1
    when it never rose above 0), summed in int64 like heaptrack."""
    _, _, info, events = parsed
    live = peak = 0
    at = -1
    for n, (plus, i) in enumerate(events):
        live = s64(live + info[i][0] if plus else live - info[i][0])
        if plus and live > peak:
            peak, at = live, n
    return peak, at


def listed(parsed):
    """(calls, which of the Summary's tables Peak Contributions, Largest
    Memory Leaks, Most Memory Allocations, Most Temporary Allocations list a
    location, number of rows of the Bottom-Up tab), computed from the file
    the way heaptrack_gui 1.4.0 does it: costs summed per symbol (function,
    module) of each allocation's leaf frame in int64 (one Bottom-Up row per
    such symbol); a `-` is temporary when its index is that of the `+`
    just before it (the marker is 0 at the start and after each `-`); a
    site's peak is what it held when the total first reached its peak;
    the tables hide rows whose |cost| is 0 or under 1% of |total|
    (TopProxy)."""
    frame, trace, info, events = parsed
    peak, at = peak_at(parsed)
    total = [peak, 0, 0, 0]          # peak, leaked, allocations, temporary
    cost = {}
    last = 0
    for n, (plus, i) in enumerate(events):
        size, t = info[i]
        c = cost.setdefault(frame[trace[t][0]], [0, 0, 0, 0])
        if plus:
            c[1], c[2], last = s64(c[1] + size), c[2] + 1, i
            total[1], total[2] = s64(total[1] + size), total[2] + 1
        else:
            temp = int(i == last)
            c[1], c[3], last = s64(c[1] - size), c[3] + temp, 0
            total[1], total[3] = s64(total[1] - size), total[3] + temp
        if n == at:
            for site in cost.values():
                site[0] = site[1]
    rows = []
    for k in range(4):
        threshold = int(s64(abs(total[k])) * 0.01)
        rows.append(any(s64(abs(c[k])) != 0 and s64(abs(c[k])) >= threshold
                        for c in cost.values()))
    return total[2], rows, len(cost), total[3]


def peak_tree_depth(parsed):
    """(lo, hi): how many rows of bars the Flame Graph tab of heaptrack_gui
    1.4.0 shows as it opens (cost "Memory Peak", top-down, recursion
    collapsed), from the file: what each trace held when the total first
    reached its peak, summed over the top-down call tree (a child per
    symbol, outermost frame first, a frame whose symbol is its caller's
    merged into it). hi is the depth of the nodes with a positive cost, lo
    that of the nodes of at least 2% of the peak (25 px and more at the
    window's width: drawn and counted whatever the GUI's 0.1% threshold
    and rounding do to smaller ones)."""
    frame, trace, info, events = parsed
    peak, at = peak_at(parsed)
    held = {}
    for plus, i in events[:at + 1]:
        size, t = info[i]
        held[t] = held.get(t, 0) + (size if plus else -size)
    tree = {}
    for t, cost in held.items():
        path = []
        while t:
            f, t = trace[t]
            if not path or path[-1] != frame[f] or not frame[f][0]:
                path.append(frame[f])
        node = tree
        for symbol in reversed(path):
            node = node.setdefault(symbol, [0, {}])
            node[0] += cost
            node = node[1]

    def depth(node, least):
        return max([1 + depth(kids, least) for cost, kids in node.values()
                    if cost > 0 and cost >= least] or [0])
    return depth(tree, 0.02 * peak), depth(tree, 1)


# -- The GUI -------------------------------------------------------------------

WINDOW = re.compile(r'^\s*(0x[0-9a-f]+) "Heaptrack - (.*)": \("heaptrack_gui" "heaptrack_gui"\)')


def find_window(display, filename):
    """(id, x, y, w, h) of the viewable main window showing filename, or None."""
    r = T.run(["xwininfo", "-display", display, "-root", "-tree"], errors="replace")
    for line in r.stdout.splitlines():
        m = WINDOW.match(line)
        if not m or not m.group(2).startswith(filename):
            continue
        info = T.run(["xwininfo", "-display", display, "-id", m.group(1)],
                     errors="replace").stdout
        field = dict(re.findall(r"^\s*([A-Za-z -]+):\s+(\S+)", info, re.M))
        if field.get("Map State") != "IsViewable":
            return None
        return (m.group(1), int(field["Absolute upper-left X"]),
                int(field["Absolute upper-left Y"]), int(field["Width"]),
                int(field["Height"]))
    return None


class Slot:
    """One Xvfb and the GUI running on it (one at a time)."""

    def __init__(self, workdir):
        self.dir = workdir
        self.home = os.path.join(workdir, "home")
        self.runtime = os.path.join(workdir, "runtime")
        os.makedirs(self.home, exist_ok=True)
        os.makedirs(self.runtime, mode=0o700, exist_ok=True)
        self.x = Xvfb(workdir)
        self.job = None

    def launch(self, job):
        self.job = job
        job.update(start=time.time(), window=None, last=None, since=None, on=None, seen={})
        env = {"PATH": "/usr/bin:/bin", "HOME": self.home, "XDG_RUNTIME_DIR": self.runtime,
               "XDG_CONFIG_HOME": os.path.join(self.home, ".config"),
               "XDG_CACHE_HOME": os.path.join(self.home, ".cache"),
               "XDG_DATA_HOME": os.path.join(self.home, ".local", "share"),
               "DISPLAY": self.x.display, "QT_QPA_PLATFORM": "xcb",
               "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
        # The file by a path relative to the slot's folder (a sibling of
        # gui_files): heaptrack_gui's main window is at least as wide as the
        # path it was given (its loading page says "Loading file <path>,
        # please wait..."), and a long one (Bazel's TEST_TMPDIR) pushes the
        # Stacks dock of the Bottom-Up tab out of the window, or widens it.
        job["proc"] = spawn(["heaptrack_gui", os.path.relpath(job["path"], self.dir)],
                            os.path.join(self.dir, "gui.log"), env=env, cwd=self.dir)

    def step(self, now):
        """Looks at the running GUI once; finishes the job when it is done.
        The Summary tab first (as the GUI opens); then, for a job with tabs
        to see (job["want"]), each of them in turn after a click on it."""
        job = self.job
        rc = job["proc"].poll()
        age = now - job["start"]
        if rc is not None and rc == -signal.SIGABRT and job["window"] is None and \
                age < 2.0 and not job.get("retried"):
            # heaptrack_gui 1.4.0 rarely aborts while it starts, before it
            # has a window or reads the file (seen about once in a few
            # hundred starts, on any file). One new start; the crash this
            # test is about (SIGSEGV while the file loads) is never retried.
            job["retried"] = "aborted %.1f s after its start (started again)" % age
            stop(job["proc"])
            self.launch(job)
            return None
        if rc is not None:
            return self._done(age)
        if self.x.proc.poll() is not None:
            job["error"] = "Xvfb %s ended (%s)" % (self.x.display, status_text(self.x.proc.poll()))
            return self._done(age)
        if job["window"] is None:
            job["window"] = find_window(self.x.display, os.path.basename(job["path"]))
            job["mapped"] = age if job["window"] else None
        if job["window"] is not None:
            _, x, y, w, h = job["window"]
            shot = self.x.grab(x, y, w, h)
            if job["last"] is None or shot.data != job["last"].data:
                job.update(last=shot, since=now, verdict=None)
            quiet = now - job["since"]
            tab = job["on"]
            if tab is None and age >= MIN_ALIVE and quiet >= STABLE:
                if job["verdict"] is None:
                    job["verdict"] = judge(shot)
                if quiet >= WRONG or not summary_problems(job["verdict"], job["rows"]):
                    job["settled"] = job["since"] - job["start"]
                    shot.png(job["png"])
                    return self._next_tab(now, age)
            elif tab is not None and quiet >= TAB_STABLE:
                seen = job["seen"][tab]
                if job["verdict"] is None:
                    job["verdict"] = judge_tab(shot, job["bar"], tab)
                if quiet >= WRONG or not tab_problems(job["verdict"], tab, job["want"][tab],
                                                      job.get("stacked")):
                    seen.update(verdict=job["verdict"], settled=job["since"] - seen["clicked"])
                    shot.png(seen["png"])
                    return self._next_tab(now, age)
        if age > GIVE_UP:
            job["timeout"] = True
            return self._done(age)
        return None

    def _next_tab(self, now, age):
        """Clicks the next tab job["want"] names that has not been seen (and
        waits for the screen to change), or ends the job."""
        job = self.job
        todo = [t for t in job.get("want", {}) if t not in job["seen"]]
        if not todo:
            return self._done(age)
        if job["on"] is None:
            job["summary"] = job["verdict"]
            frame = job["verdict"].get("frame")
            job["bar"] = tab_bar(job["last"], frame) if frame else None
            if job["bar"] is None:
                job["tab_error"] = "no tab bar of %d tabs or more found above the Summary" % TABS_ALWAYS
                return self._done(age)
        tab, bar = todo[0], job["bar"]
        x0, x1 = bar["tabs"][TABS.index(tab)]
        _, wx, wy, _, _ = job["window"]
        job["seen"][tab] = {"clicked": now,
                            "png": "%s-%s.png" % (job["png"][:-4], tab.lower().replace(" ", "-"))}
        try:
            click(self.x.display, wx + (x0 + x1) // 2, wy + (bar["top"] + bar["frame"]) // 2)
        except OSError as e:
            job["tab_error"] = "could not click the %s tab: %s" % (tab, e)
            return self._done(age)
        # The screen shown before the click stays "last": "since" restarts
        # now, and again at each change the click brings.
        job.update(on=tab, since=now, verdict=None)
        return None

    def _done(self, age):
        """Closes the GUI (noting whether it was still running) and keeps the
        last screenshot (of the Summary, or of a tab not judged yet) as PNG."""
        job, self.job = self.job, None
        job["exited"] = stop(job["proc"])
        job["age"] = age
        shot = job.pop("last")
        if job["on"] is None:
            if job.get("since") and "settled" not in job:
                job["settled"] = job["since"] - job["start"]
            if shot is not None:
                shot.png(job["png"])
                if job.get("verdict") is None:
                    job["verdict"] = judge(shot)
            job["summary"] = job.get("verdict")
        else:
            seen = job["seen"][job["on"]]
            if "verdict" not in seen:
                seen.update(verdict=judge_tab(shot, job["bar"], job["on"]),
                            settled=job["since"] - seen["clicked"])
                shot.png(seen["png"])
        job["done"] = True

    def close(self):
        if self.job:
            stop(self.job["proc"])
        self.x.close()


def run_all(jobs, tmp):
    """Runs the GUI on every job, SLOTS at a time; jobs get a "result"."""
    slots = []
    try:
        for i in range(min(SLOTS, len(jobs))):
            slots.append(Slot(os.path.join(tmp, "slot%d" % i)))
        # Control: a fresh screen is blank.
        s = slots[0]
        check(looks_blank(judge(s.x.grab(0, 0, *s.x.size))),
              "control: the blank screen of a fresh Xvfb is not judged blank")
        queue = list(jobs)
        while queue or any(s.job for s in slots):
            for s in slots:
                if s.job is None and queue:
                    s.launch(queue.pop(0))
            time.sleep(TICK)
            now = time.time()
            for s in slots:
                if s.job:
                    s.step(now)
    finally:
        for s in slots:
            s.close()


def report(job):
    """The checks on one finished job."""
    name = job["name"]
    if not check(job.get("done"), "%s: the GUI was never started" % name):
        return
    if not check(not job.get("error"), "%s: %s" % (name, job.get("error"))):
        return
    print("%-45s window %4.1f s, last change %4.1f s, closed %4.1f s%s%s" % (
        name, job.get("mapped") or 0, job.get("settled", 0), job["age"],
        "" if job["exited"] is None else ", " + status_text(job["exited"]),
        "; first start " + job["retried"] if job.get("retried") else ""))
    if not check(job["exited"] is None, "%s: heaptrack_gui ended after %.1f s, %s" % (
            name, job["age"], status_text(job["exited"]))):
        return
    check(job["age"] >= MIN_ALIVE, "%s: closed too early (%.1f s)" % (name, job["age"]))
    if not check(job["window"] is not None, "%s: no mapped window 'Heaptrack - %s' after %.1f s"
                 % (name, os.path.basename(job["path"]), job["age"])):
        return
    if not check(not job.get("timeout"), "%s: the window kept changing for %.0f s"
                 % (name, job["age"])):
        return
    problems = summary_problems(job["summary"], job["rows"])
    check(not problems, "%s: Summary tab: %s" % (name, "; ".join(problems)))
    return True


def report_tabs(job):
    """The checks on the tabs a job clicked; the verdicts, or None when the
    tabs could not be clicked."""
    name = job["name"]
    if not check(not job.get("tab_error"), "%s: %s" % (name, job.get("tab_error"))):
        return None
    verdicts = {}
    for tab, want in job["want"].items():
        seen = job["seen"].get(tab)
        if not check(seen and "verdict" in seen, "%s: the %s tab was never shown (closed "
                     "after %.1f s)" % (name, tab, job["age"])):
            continue
        v = verdicts[tab] = seen["verdict"]
        print("%-45s %-11s drawn %3.1f s after the click: %s, %s %s" % (
            name, tab, seen["settled"], "current" if v["selected"] == TABS.index(tab) else
            "NOT current", v["count"], "row(s) of bars" if tab == FLAME else "row(s)"))
        problems = tab_problems(v, tab, want, job["stacked"])
        check(not problems, "%s: %s tab: %s" % (name, tab, "; ".join(problems)))
    return verdicts


def has_stacks(ljm, f):
    """Whether the JSON export says the stream has real call stacks."""
    r = T.run([ljm, "convert", "-f", "json", "-o", "-", f])
    try:
        return r.returncode == 0 and json.loads(r.stdout)["stream"]["stacks"] is True
    except (ValueError, KeyError, TypeError):
        return False


def heap_job(ljm, app_dir, tmp, files, outdir):
    """The heap as a flame graph: a snapshot of app_dir/app.lua (recorded
    here under the system's LuaJIT) as .heaptrack.zst, one allocation per
    object whose stack is its place in the dominator tree. The file must hold
    as many allocations and bytes as the independent snapshot reader counts
    objects and bytes; its Flame Graph and Bottom-Up tabs are opened as those
    of a stream with call stacks."""
    work = os.path.join(tmp, "heap_app")
    os.makedirs(work, exist_ok=True)
    snap, r = T.record_heap_app(ljm, app_dir, work)
    if not check(r.returncode == 0 and os.path.exists(snap),
                 "ljm record app.lua: exit %d: %s" % (r.returncode, r.stderr[-300:])):
        return None
    name = "heap snapshot app.ljh .heaptrack.zst"
    ht = os.path.join(files, "heap_app.heaptrack.zst")
    r = T.run([ljm, "convert", "-o", ht, snap])
    if not check(r.returncode == 0, "%s: ljm convert: %s" % (name, r.stderr[-300:])):
        return None
    with open(snap, "rb") as f:
        _, _, objs = ljhread.read(f.read())
    objs = [o for o in objs.values() if o.type != "root"]
    parsed = parse(decompress(ht))
    calls, rows, symbols, _ = listed(parsed)
    check(calls == len(objs), "%s: %d allocations, the snapshot has %d objects" % (name, calls, len(objs)))
    peak = peak_at(parsed)[0]
    check(peak == sum(o.size for o in objs), "%s: peak %d, the snapshot's objects hold %d bytes"
          % (name, peak, sum(o.size for o in objs)))
    depth = peak_tree_depth(parsed)
    check(depth[0] >= 3, "%s: the dominator tree drawn %s levels deep" % (name, depth))
    return dict(name=name, path=ht, rows=rows, calls=calls, stacked=True, depth=depth,
                want={FLAME: depth, BOTTOM_UP: (min(symbols, 1), symbols)},
                png=os.path.join(outdir, "heap_app_heaptrack_zst.png"))


class Terminated(Exception):
    pass


def on_signal(signum, _frame):
    raise Terminated(signal.Signals(signum).name)


def main():
    for tool in ("heaptrack_gui", "Xvfb", "xwininfo", "zstd"):
        if not shutil.which(tool):
            check(False, "%s not found (run scripts/setup.sh --tests)" % tool)
            return T.summary()
    t0 = time.time()
    argv = sys.argv[1:]
    heap_app = None
    if "--heap-app" in argv:
        i = argv.index("--heap-app")
        heap_app = os.path.abspath(argv[i + 1])
        del argv[i:i + 2]
    ljm, tmp, _, cases = T.reader_cases(argv)
    outdir = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR") or os.path.join(tmp, "shots")
    files = os.path.join(tmp, "gui_files")
    os.makedirs(outdir, exist_ok=True)
    os.makedirs(files, exist_ok=True)
    jobs = []
    for f, want in cases:
        rel = os.path.relpath(f)
        if rel.startswith(".."):
            rel = os.path.basename(f)
        stacked = None
        for suffix in (".heaptrack.gz", ".heaptrack.zst"):
            name = rel + " " + suffix
            base = re.sub(r"[^A-Za-z0-9_.-]", "_", rel[:-4]) + suffix
            ht = os.path.join(files, base)
            if not T.convert_vs_reader(ljm, "heaptrack", ht, f, name, want):
                continue
            if stacked is None:
                stacked = has_stacks(ljm, f)
            parsed = parse(decompress(ht))
            calls, rows, symbols, temps = listed(parsed)
            check(calls == want["samples"], "%s: %d calls in the file, expected %d"
                  % (name, calls, want["samples"]))
            # Its Temporary figures are ljm's (exact streams; the reader's
            # replay, which the JSON's temp_count equals: export_testlib)
            # but for the first block's frees the file says heaptrack miscounts
            text = decompress(ht)
            m = re.search(rb"\n# ljm: (\d+) free\(s\) of the first block", text)
            extra = int(m.group(1)) if m else 0
            check(want["sample_rate"] or temps == want["temporary"] + extra,
                  "%s: %d temporary allocations for heaptrack_gui, ljm counts %d (+%d)"
                  % (name, temps, want["temporary"], extra))
            peak = peak_at(parsed)[0]
            check(peak == want["peak_bytes"], "%s: peak %d in the file, expected %d"
                  % (name, peak, want["peak_bytes"]))
            job = dict(name=name, path=ht, rows=rows, calls=calls, stacked=stacked, want={},
                       depth=peak_tree_depth(parsed),
                       png=os.path.join(outdir, base.replace(".", "_") + ".png"))
            if stacked:
                # After the Summary: the Flame Graph of the real stacks,
                # then the Bottom-Up tree (a row per leaf symbol).
                job["want"] = {FLAME: job["depth"], BOTTOM_UP: (min(symbols, 1), symbols)}
            jobs.append(job)
    if heap_app:
        job = heap_job(ljm, heap_app, tmp, files, outdir)
        if job:
            jobs.append(job)
    check(len(jobs) >= 20, "only %d files converted" % len(jobs))
    check(any(job["stacked"] for job in jobs), "no stream with call stacks in the corpus")
    check(any(job["name"].startswith(os.path.join("testdata", "ext", T.SAMPLED)) and
              job["stacked"] for job in jobs), "%s is not opened with its tabs" % T.SAMPLED)
    # Controls for the Flame Graph check: the standard streams (most calls)
    # whose graph is one and two rows deep must be seen so, and fail it.
    flame_controls = []
    for depth in (1, 2):
        fit = [job for job in jobs if not job["stacked"] and job["depth"] == (depth, depth)]
        if check(fit or depth > 1, "no standard stream with a one-level peak call tree"):
            if fit:
                flame_controls.append(max(fit, key=lambda job: job["calls"]))
                flame_controls[-1]["want"] = {FLAME: (depth, depth)}
    # Control: heaptrack_gui shows an empty summary for a zero-byte file,
    # and a Bottom-Up tab without rows.
    empty = os.path.join(files, "empty-control.heaptrack.zst")
    open(empty, "wb").close()
    control = dict(name="control", path=empty, rows=[True] * 4, stacked=False,
                   want={BOTTOM_UP: (0, 0)}, png=os.path.join(outdir, "empty-control.png"))
    t1 = time.time()
    try:
        run_all([control] + jobs, tmp)
    except (OSError, RuntimeError, subprocess.SubprocessError) as e:
        check(False, "could not run the GUIs: %s" % e)
    finally:
        cleanup()
    t2 = time.time()
    for job in jobs:
        if report(job) and job["want"]:
            verdicts = report_tabs(job)
            if job in flame_controls and verdicts and FLAME in verdicts:
                # The check a stream with call stacks gets must fail here.
                depth = job["want"][FLAME][0]
                problems = tab_problems(verdicts[FLAME], FLAME, (depth, depth), True)
                check(len(problems) == 1 and "real call stacks" in problems[0],
                      "control: the %d-level Flame Graph of %s was judged %s" % (
                          depth, job["name"], problems or "a graph of real call stacks"))
    if check(control.get("done") and control["exited"] is None and control.get("summary"),
             "control: no window for the empty file (%s)" % status_text(control.get("exited"))):
        problems = summary_problems(control["summary"], [True] * 4)
        check(any(p.startswith("no debuggee") for p in problems) and
              any(p.startswith("tables") for p in problems) and
              not any(p.startswith(("blank", "no summary")) for p in problems),
              "control: the empty summary was judged %s" % (problems or "a summary with data"))
        verdicts = report_tabs(control)
        check(verdicts and BOTTOM_UP in verdicts and verdicts[BOTTOM_UP]["count"] == 0,
              "control: the empty file's Bottom-Up tab was judged %s"
              % (verdicts or {}).get(BOTTOM_UP))
    os.makedirs(SHOTS, exist_ok=True)
    for old in os.listdir(SHOTS):
        if old.endswith(".png"):
            os.remove(os.path.join(SHOTS, old))
    keep = [job["png"] for job in jobs[:2]]
    for job in jobs:
        if job["stacked"]:
            keep += [job["png"]] + [seen["png"] for seen in job.get("seen", {}).values()]
    for png in dict.fromkeys(keep):
        if os.path.exists(png):
            shutil.copy(png, SHOTS)
    clicks = sum(len(job.get("seen", ())) for job in [control] + jobs)
    print("%d GUI runs, %d at a time, %d tab clicks: %.0f s (conversions %.0f s)"
          % (len(jobs) + 1, SLOTS, clicks, t2 - t1, t1 - t0))
    return T.summary()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        status = main()
    except Terminated as e:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        cleanup()
        check(False, "stopped by %s" % e)
        status = T.summary()
    finally:
        cleanup()
    sys.exit(status)
