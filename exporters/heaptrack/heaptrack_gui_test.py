#!/usr/bin/env python3
"""heaptrack_gui_test.py -- opens every converted corpus profile in the real
heaptrack_gui (Debian's heaptrack-gui 1.4.0) on virtual X servers.

Usage: heaptrack_gui_test.py LJM_BINARY LJM_TOTALS_PY CORPUS_DIR...

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
  * (a sanity check of the file the GUI reads) its number of `+` lines is
    the independent reader's allocation count.
Controls, so that these checks can fail: the blank screen of a fresh Xvfb
must be judged blank, and a GUI showing the empty summary of a zero-byte
.heaptrack.zst (which heaptrack_gui opens without an error, showing zeros)
must fail the debuggee and table checks, and only those.
Every window is saved as PNG under $TEST_UNDECLARED_OUTPUTS_DIR; the first
two also replace the PNGs in /tmp/heaptrack-shots/. Every process started here is killed on
the way out, also on failure or SIGTERM. Ends with "N passed, N failed".
"""
import ctypes
import gzip
import mmap
import os
import re
import resource
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import export_testlib as T  # noqa: E402
from export_testlib import check  # noqa: E402

SLOTS = 6               # GUIs (and Xvfb servers) at once
SCREEN = (1600, 1000)   # wide enough for the default window (1332x896)
MIN_ALIVE = 4.0         # s: the known crash comes within 1 s of the start
STABLE = 1.2            # s without a change on screen = loading finished
WRONG = 8.0             # s without a change on a screen that fails judge()
GIVE_UP = 45.0          # s per file
TICK = 0.3              # s between looks
SHOTS = "/tmp/heaptrack-shots"

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
        number = b""
        deadline = time.time() + 15
        while not number.endswith(b"\n") and time.time() < deadline:
            if select.select([rfd], [], [], 0.2)[0]:
                chunk = os.read(rfd, 16)
                if not chunk:
                    break
                number += chunk
        os.close(rfd)
        if not number.strip().isdigit():
            with open(os.path.join(workdir, "xvfb.log"), errors="replace") as fh:
                raise RuntimeError("Xvfb did not start: %s" % fh.read()[-500:])
        self.display = ":" + number.strip().decode()
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
                  Allocations): whether it lists a location."""
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
    for i in range(3):
        res["blocks"][i] = len(text_lines(dark, w, i * w // 3, (i + 1) * w // 3, top, bottom))
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


def listed(text):
    """(calls, which of the Summary's tables Peak Contributions, Largest
    Memory Leaks, Most Memory Allocations, Most Temporary Allocations list a
    location), computed from the file the way heaptrack_gui 1.4.0 does it:
    costs summed per symbol (function, module) of each allocation's leaf
    frame in int64; a `-` is temporary when its index is that of the `+`
    just before it (the marker is 0 at the start and after each `-`); a
    site's peak is what it held when the total first reached its peak;
    the tables hide rows whose |cost| is 0 or under 1% of |total|
    (TopProxy)."""
    frame, trace, info, events = [None], [None], [], []
    for line in text.split(b"\n"):
        mode = line[:2]
        if mode in (b"+ ", b"- "):
            events.append((mode == b"+ ", int(line[2:], 16)))
        elif mode in (b"i ", b"t ", b"a "):
            f = [int(x, 16) for x in line[2:].split(b" ")]
            if mode == b"i ":
                frame.append((f[2] if len(f) > 2 else 0, f[1]))
            elif mode == b"t ":
                trace.append(f[0])
            else:
                info.append((f[0], frame[trace[f[1]]]))
    live = peak = 0
    peak_at = -1
    for n, (plus, i) in enumerate(events):
        live = s64(live + info[i][0] if plus else live - info[i][0])
        if plus and live > peak:
            peak, peak_at = live, n
    total = [peak, 0, 0, 0]          # peak, leaked, allocations, temporary
    cost = {}
    last = 0
    for n, (plus, i) in enumerate(events):
        size, symbol = info[i]
        c = cost.setdefault(symbol, [0, 0, 0, 0])
        if plus:
            c[1], c[2], last = s64(c[1] + size), c[2] + 1, i
            total[1], total[2] = s64(total[1] + size), total[2] + 1
        else:
            temp = int(i == last)
            c[1], c[3], last = s64(c[1] - size), c[3] + temp, 0
            total[1], total[3] = s64(total[1] - size), total[3] + temp
        if n == peak_at:
            for site in cost.values():
                site[0] = site[1]
    rows = []
    for k in range(4):
        threshold = int(s64(abs(total[k])) * 0.01)
        rows.append(any(s64(abs(c[k])) != 0 and s64(abs(c[k])) >= threshold
                        for c in cost.values()))
    return total[2], rows


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
        job.update(start=time.time(), window=None, last=None, since=None)
        env = {"PATH": "/usr/bin:/bin", "HOME": self.home, "XDG_RUNTIME_DIR": self.runtime,
               "XDG_CONFIG_HOME": os.path.join(self.home, ".config"),
               "XDG_CACHE_HOME": os.path.join(self.home, ".cache"),
               "XDG_DATA_HOME": os.path.join(self.home, ".local", "share"),
               "DISPLAY": self.x.display, "QT_QPA_PLATFORM": "xcb",
               "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
        job["proc"] = spawn(["heaptrack_gui", job["path"]],
                            os.path.join(self.dir, "gui.log"), env=env, cwd=self.dir)

    def step(self, now):
        """Looks at the running GUI once; finishes the job when it is done."""
        job = self.job
        rc = job["proc"].poll()
        age = now - job["start"]
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
            if age >= MIN_ALIVE and quiet >= STABLE:
                if job["verdict"] is None:
                    job["verdict"] = judge(shot)
                if quiet >= WRONG or not summary_problems(job["verdict"], job["rows"]):
                    return self._done(age)
        if age > GIVE_UP:
            job["timeout"] = True
            return self._done(age)
        return None

    def _done(self, age):
        """Closes the GUI (noting whether it was still running) and keeps the
        last screenshot as PNG."""
        job, self.job = self.job, None
        job["exited"] = stop(job["proc"])
        job["age"] = age
        if job.get("since"):
            job["settled"] = job["since"] - job["start"]
        shot = job.pop("last")
        if shot is not None:
            shot.png(job["png"])
            if job.get("verdict") is None:
                job["verdict"] = judge(shot)
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
    print("%-45s window %4.1f s, last change %4.1f s, closed %4.1f s%s" % (
        name, job.get("mapped") or 0, job.get("settled", 0), job["age"],
        "" if job["exited"] is None else ", " + status_text(job["exited"])))
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
    problems = summary_problems(job["verdict"], job["rows"])
    check(not problems, "%s: Summary tab: %s" % (name, "; ".join(problems)))


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
    ljm, tmp, _, cases = T.reader_cases(sys.argv[1:])
    outdir = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR") or os.path.join(tmp, "shots")
    files = os.path.join(tmp, "gui_files")
    os.makedirs(outdir, exist_ok=True)
    os.makedirs(files, exist_ok=True)
    jobs = []
    for f, want in cases:
        rel = os.path.relpath(f)
        if rel.startswith(".."):
            rel = os.path.basename(f)
        for suffix in (".heaptrack.gz", ".heaptrack.zst"):
            name = rel + " " + suffix
            base = re.sub(r"[^A-Za-z0-9_.-]", "_", rel[:-4]) + suffix
            ht = os.path.join(files, base)
            if not T.convert_vs_reader(ljm, "heaptrack", ht, f, name, want):
                continue
            calls, rows = listed(decompress(ht))
            check(calls == want["alloc_count"], "%s: %d calls in the file, expected %d"
                  % (name, calls, want["alloc_count"]))
            jobs.append(dict(name=name, path=ht, rows=rows,
                             png=os.path.join(outdir, base.replace(".", "_") + ".png")))
    check(len(jobs) >= 20, "only %d files converted" % len(jobs))
    # Control: heaptrack_gui shows an empty summary for a zero-byte file.
    empty = os.path.join(files, "empty-control.heaptrack.zst")
    open(empty, "wb").close()
    control = dict(name="control", path=empty, rows=[True] * 4,
                   png=os.path.join(outdir, "empty-control.png"))
    t1 = time.time()
    try:
        run_all([control] + jobs, tmp)
    except (OSError, RuntimeError, subprocess.SubprocessError) as e:
        check(False, "could not run the GUIs: %s" % e)
    finally:
        cleanup()
    t2 = time.time()
    for job in jobs:
        report(job)
    if check(control.get("done") and control["exited"] is None and control.get("verdict"),
             "control: no window for the empty file (%s)" % status_text(control.get("exited"))):
        problems = summary_problems(control["verdict"], [True] * 4)
        check(any(p.startswith("no debuggee") for p in problems) and
              any(p.startswith("tables") for p in problems) and
              not any(p.startswith(("blank", "no summary")) for p in problems),
              "control: the empty summary was judged %s" % (problems or "a summary with data"))
    os.makedirs(SHOTS, exist_ok=True)
    for old in os.listdir(SHOTS):
        if old.endswith(".png"):
            os.remove(os.path.join(SHOTS, old))
    for job in jobs[:2]:
        if os.path.exists(job["png"]):
            shutil.copy(job["png"], SHOTS)
    print("%d GUI runs, %d at a time: %.0f s (conversions %.0f s)"
          % (len(jobs) + 1, SLOTS, t2 - t1, t1 - t0))
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
