#!/usr/bin/env python3
"""hostile_inputs_test.py -- files that could amplify: every format's
memory, output and CPU stay bounded.

  deep   a 300 000-node stack chain, an event every 1000 nodes, the innermost
         node's first (a walk of the whole chain per level would be
         quadratic): each format converts it within a memory and CPU limit;
         folded, Markdown, pprof and speedscope
         show at most LJM_FRAMES_SHOWN_MAX (256) frames of a path below one
         "[...]"; SVG, .heapprofile and heaptrack keep every frame.
  nodes  `ljm report` of a 1 000 000-node chain: memory per node; `ljm top`
         on it within report's memory.
  names  a 2 MiB chunk name used by 200 sites, and 300 MiB names in a small
         zstd file: names are cut (1 MiB in the stream, a warning with the
         byte offset; 512 bytes in what a site shows), every output stays small.
  redump one address named in turn by 20 names before each of 40 000 C
         events: `ljm report`'s memory does not grow with the events.

usage: hostile_inputs_test.py LJM"""
import os
import re
import subprocess
import sys
import tempfile

from checks import Checks

from ljmwrite import lstr, uleb  # the tests' stream writer

FRAMES_SHOWN = 256
MiB = 1 << 20


def stream(syms, events, flags=1):
    return (b"ljs\x03\x00\x00\x00" + syms + b"\x80" +
            b"ljm\x03" + bytes([flags]) + b"\x00\x00" + events + b"\x80")


def node(parent, proto, line):
    return b"\x20" + uleb(parent) + b"\x01" + uleb(proto) + uleb(line)


def alloc(stack, proto, line, addr, size):
    return (b"\x21" + uleb(stack) + b"\x09" + uleb(proto) + uleb(line) +
            uleb(addr) + uleb(size))


def deep_stream(depth):
    """A chain of `depth` nodes (one function recursing on 7 lines); the
    innermost node's event first, then one every 1000 nodes."""
    proto = 0x10000
    syms = b"\x00" + uleb(proto) + lstr(b"@deep.lua") + uleb(1)
    ev = bytearray()
    for i in range(1, depth + 1):
        ev += node(i - 1, proto, 3 + i % 7)
    ev += alloc(depth, proto, 3 + depth % 7, 0x100000, 48)
    for i in range(1000, depth, 1000):
        ev += alloc(i, proto, 3 + i % 7, 0x100000 + i * 64, 32)
    return stream(syms, bytes(ev))


class Limited:
    """Runs a command under an address-space and CPU limit (ulimit) and
    /usr/bin/time, whose small process forks it: its peak RSS is the
    command's own, not this (large) process's, which a fork here would copy."""

    def __init__(self, tmp, mem_mb, cpu_s):
        self.tmp, self.mem, self.cpu = tmp, mem_mb, cpu_s

    def run(self, args):
        rss_file = os.path.join(self.tmp, "rss")
        limits = "ulimit -t %d; " % self.cpu + ("ulimit -v %d; " % (self.mem * 1024) if self.mem else "")
        cmd = ["/usr/bin/time", "-f", "%M", "-o", rss_file, "sh", "-c",
               limits + 'exec "$@"', "sh"] + args
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        with open(rss_file) as f:
            last = f.read().strip().splitlines()[-1:]
        rss = int(last[0]) // 1024 if last and last[0].isdigit() else -1
        # time says "Command exited with non-zero status N" or "terminated by signal".
        err = p.stderr.decode("utf-8", "replace")
        return p.returncode, err, rss


def is_asan(path):
    with open(path, "rb") as f:
        return b"__asan_init" in f.read()


def read(path):
    """A file's bytes, b"" when the conversion wrote none."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def folded_frames(path):
    """Frames per line of a folded file (the count after the last space)."""
    return [line.rsplit(b" ", 1)[0].split(b";") for line in read(path).splitlines() if line.strip()]


def main():
    ljm = os.path.abspath(sys.argv[1])
    ck = Checks("hostile_inputs_test")
    asan = is_asan(ljm)
    # ASan reserves terabytes of address space and doubles memory: its runs
    # are bounded by peak RSS only, with a larger allowance.
    tmp = tempfile.mkdtemp(prefix="ljm-hostile-")
    lim = Limited(tmp, None if asan else 1536, 300 if asan else 90)
    rss_cap = 1536 if asan else 512

    # -- deep: every format, linear ------------------------------------------
    depth = 300000
    deep = os.path.join(tmp, "deep.ljm")
    with open(deep, "wb") as f:
        f.write(deep_stream(depth))
    size_in = os.path.getsize(deep)
    outs = {}
    for fmt, ext in [("text", "txt"), ("folded", "folded"), ("svg", "svg"),
                     ("markdown", "md"), ("json", "json"), ("pprof", "pb.gz"),
                     ("heaptrack", "heaptrack.gz"), ("speedscope", "speedscope.json"),
                     ("heapprofile", "heapprofile"), ("ljm", "ljm")]:
        out = os.path.join(tmp, "deep." + ext)
        rc, err, rss = lim.run([ljm, "convert", "-q", "-f", fmt, "-o", out, deep])
        osize = os.path.getsize(out) if os.path.exists(out) else -1
        ck(rc == 0, "deep %s: exit %d (%s)" % (fmt, rc, err.strip()[-200:]))
        ck(rss < rss_cap, "deep %s: peak RSS %d MB, want < %d" % (fmt, rss, rss_cap))
        # Tree formats write each node a bounded number of times; the
        # others at most FRAMES_SHOWN frames per sample.
        ck(0 < osize < 400 * size_in, "deep %s: %d output bytes from %d" % (fmt, osize, size_in))
        outs[fmt] = out
        print("deep %-12s rc %d  %4d MB  %10d bytes" % (fmt, rc, rss, osize))

    lines = folded_frames(outs["folded"])
    # Paths cut to their innermost frames merge where those repeat (the
    # recursion's 7 lines): every event is still counted.
    counted = sum(int(l.rsplit(b" ", 1)[1]) for l in read(outs["folded"]).splitlines() if l.strip())
    ck(counted == 48 + 32 * (depth // 1000 - 1), "folded: %d bytes counted" % counted)
    ck(7 <= len(lines) <= depth // 1000, "folded: %d stacks" % len(lines))
    longest = max(lines, key=len) if lines else []
    # "[...]", the innermost 256 nodes, the allocating line.
    ck(len(longest) == FRAMES_SHOWN + 2 and longest[0] == b"[...]",
       "folded: longest path %d frames, first %r" % (len(longest), longest[:1]))
    ck(all(len(l) <= FRAMES_SHOWN + 2 for l in lines), "folded: a path longer than the cap")

    md = read(outs["markdown"])
    rows = [l for l in md.split(b"\n") if l.startswith(b"| ") and b"<br>" in l]
    spans = [r.count(b"<br>") + 1 for r in rows]
    ck(spans and max(spans) == FRAMES_SHOWN + 1 and rows[0].rstrip(b" |").endswith(b"`[...]`"),
       "markdown: at most %d frames then [...] (got %s)" % (FRAMES_SHOWN, spans[:3]))

    # pprof: samples' stacks through go tool pprof's own reader.
    p = subprocess.run(["go", "tool", "pprof", "-traces", outs["pprof"]],
                       capture_output=True, timeout=300)
    traces = p.stdout.decode("utf-8", "replace").split("-----------+-------------------------------------------------------")
    frames = [len([l for l in t.splitlines()[1:] if l.strip()]) for t in traces[1:-1]]
    ck(p.returncode == 0 and 7 <= len(frames) <= depth // 1000,
       "pprof -traces: rc %d, %d traces" % (p.returncode, len(frames)))
    ck(frames and max(frames) == FRAMES_SHOWN + 1 and "[...]" in traces[1],
       "pprof: a sample holds at most %d frames and [...] (got %s)" % (FRAMES_SHOWN + 1, frames[:3]))

    # SVG and .heapprofile are trees: every frame of the chain is there once.
    svg = read(outs["svg"])
    fn = b"<title>function &lt;deep.lua:1&gt;"
    ck(svg.count(fn) == depth, "svg: %d function frames, want %d" % (svg.count(fn), depth))
    hp = read(outs["heapprofile"])
    ck(hp.count(b'"callFrame"') > depth, "heapprofile: %d nodes" % hp.count(b'"callFrame"'))
    ck(hp.count(b"\n") < depth + 1000, "heapprofile: a node per line")

    # -- nodes: memory per stack node for ljm report -------------------------
    n = 1000000
    proto = 0x10000
    ev = bytearray()
    for i in range(1, n + 1):
        ev += node(i - 1, proto, 3 + i % 7)
    ev += alloc(n, proto, 3, 0x1000, 32)
    chain = os.path.join(tmp, "chain.ljm")
    with open(chain, "wb") as f:
        f.write(stream(b"\x00" + uleb(proto) + lstr(b"@c.lua") + uleb(1), bytes(ev)))
    base = lim.run([ljm, "report", deep])[2]  # 300 k nodes
    rc, err, rss = lim.run([ljm, "report", chain])
    per_node = (rss - base) * MiB / (n - depth) if rss > base else 0
    print("report: 300 k nodes %d MB, 1 M nodes %d MB: %.0f bytes per node" % (base, rss, per_node))
    ck(rc == 0, "report of 1 M nodes: exit %d %s" % (rc, err))
    ck(per_node < (160 if asan else 64), "report: %.0f bytes per stack node" % per_node)
    # ljm top keeps figures only for the nodes that have some: its memory is
    # report's on the same input
    rc, err, top_rss = lim.run([ljm, "top", "--once", "--stacks", chain])
    print("top --once --stacks: 1 M nodes %d MB (report %d MB)" % (top_rss, rss))
    ck(rc == 0 and top_rss <= rss * 1.1 + 2, "top --once --stacks of 1 M nodes: exit %d, %d MB, "
       "report %d MB %s" % (rc, top_rss, rss, err))

    # -- names ---------------------------------------------------------------
    big = b"@" + b"n" * (2 * MiB)
    syms = b"\x00" + uleb(proto) + lstr(big) + uleb(1)
    ev = bytearray()
    for i in range(200):
        ev += alloc(0, proto, i + 1, 0x1000 + i * 64, 16)
    names = os.path.join(tmp, "names.ljm")
    with open(names, "wb") as f:
        f.write(stream(syms, bytes(ev)))
    offset = 7 + 1 + len(uleb(proto))  # the chunk's length, after "ljs" v3 and the address
    for fmt, ext in [("text", "txt"), ("folded", "folded"), ("svg", "svg"),
                     ("markdown", "md"), ("json", "json"), ("pprof", "pb.gz"),
                     ("heaptrack", "heaptrack.gz"), ("speedscope", "speedscope.json"),
                     ("heapprofile", "heapprofile")]:
        out = os.path.join(tmp, "names." + ext)
        rc, err, rss = lim.run([ljm, "convert", "-q", "-f", fmt, "-o", out, names])
        osize = os.path.getsize(out) if os.path.exists(out) else -1
        ck(rc == 0, "names %s: exit %d %s" % (fmt, rc, err))
        ck(err.count("\n") == 1 and "byte %d: warning: a name of %d bytes was cut to its first %d"
           % (offset, len(big), MiB) in err, "names %s: warning %r" % (fmt, err))
        # 200 sites, each a bounded name (512 bytes shown): far below 200 x 2 MiB.
        ck(0 < osize < 2 * MiB, "names %s: %d output bytes" % (fmt, osize))
        ck(rss < rss_cap, "names %s: peak RSS %d MB" % (fmt, rss))
    text = read(os.path.join(tmp, "names.txt"))
    ck(re.search(rb"\n@n{511}\.\.\.:7: 1 events", text) is not None,
       "text: a site shows the chunk's first 512 bytes and '...'")

    # A small zstd file declaring 300 MiB names: decoded, cut, bounded.
    if subprocess.run(["which", "zstd"], capture_output=True).returncode == 0:
        zsyms = bytearray()
        for k in range(2):
            zsyms += b"\x00" + uleb(proto + k) + lstr(b"@" + b"z" * (150 * MiB)) + uleb(1)
        zev = bytearray()
        for i in range(200):
            zev += alloc(0, proto + i % 2, i + 1, 0x1000 + i * 64, 16)
        raw = os.path.join(tmp, "bomb.ljm")
        with open(raw, "wb") as f:
            f.write(stream(bytes(zsyms), bytes(zev)))
        subprocess.run(["zstd", "-q", "-19", "--rm", "-f", raw, "-o", raw + ".zst"], check=True)
        ck(os.path.getsize(raw + ".zst") < 200 * 1024, "zstd bomb is small")
        for args in (["report"], ["convert", "-q", "-f", "folded", "-o", os.path.join(tmp, "z.folded")]):
            rc, err, rss = lim.run([ljm] + args + [raw + ".zst"])
            ck(rc == 0 and "2 names cut in all" in err, "zstd names %s: %d %s" % (args[0], rc, err))
            ck(rss < rss_cap, "zstd names %s: peak RSS %d MB" % (args[0], rss))
    else:
        ck(False, "zstd is not installed (scripts/setup.sh installs it)")

    # -- redump: one address named in turn by many names ---------------------
    # Tarantool's writer re-dumps an object's symbols before each C event, its
    # undefined ones all at the object's load address: the model keeps each
    # name once, not once per change (n events: no growth with n).
    def redump(n):
        ev = bytearray()
        for i in range(n):
            for k in range(20):
                ev += b"\x0c" + uleb(0x400000) + lstr(b"import_%d_%s" % (k, b"x" * 40))
            ev += b"\x0d" + uleb(0x400010) + uleb(0x9000) + uleb(16)  # alloc from C
            ev += b"\x06" + uleb(0x9000) + uleb(16)                    # its free
        path = os.path.join(tmp, "redump%d.ljm" % n)
        with open(path, "wb") as f:
            f.write(stream(b"", bytes(ev), flags=0))
        return path
    env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=0")
    rss = {}
    for n in (2000, 40000):
        p = subprocess.run(["/usr/bin/time", "-f", "%M", ljm, "report", redump(n)], capture_output=True,
                           env=env, timeout=600)
        rss[n] = int(p.stderr.split()[-1]) // 1024
        ck(p.returncode == 0 and b"import_19_" + b"x" * 40 + b":0x400000" in p.stdout,
           "redump %d: the last name names the events (%d)" % (n, p.returncode))
    print("redump: %d MB after 2000 C events, %d MB after 40000" % (rss[2000], rss[40000]))
    ck(rss[40000] <= rss[2000] + 8, "redump: memory does not grow with the re-dumps (%d MB, %d MB)"
       % (rss[2000], rss[40000]))
    return ck.done()


sys.exit(main())
