#!/usr/bin/env python3
"""run.py -- what time windows and ljm top cost on a big recording.

Records examples/quickstart/app.lua 100000 with stacks (JIT off), then,
best of three runs each, prints the wall time and peak RSS of:
  convert -f pprof             the whole stream
  convert -f pprof --from 0    the same through the window's path
  convert -f pprof --from -0.5s  the last half second (reads the file twice)
  report                       the reference report, for scale
  top --once                   ljm top reading it all, one table
  top (following)              ljm top as it follows a file, to its end marker
  top --once --lifetime leaked one refresh of ljm top with a filter by fate
                               (the file read twice)
  top --lifetime leaked        the same, refreshing until the end marker

usage: bench/live/run.py [LJM]   (default: bazel-bin/cli/ljm; build with -c opt)"""
import os
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ljm = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "bazel-bin/cli/ljm"))
tmp = tempfile.mkdtemp()
rec = os.path.join(tmp, "app.ljm")
subprocess.run([ljm, "record", "-joff", "--stacks", "-o", rec,
                os.path.join(root, "examples/quickstart/app.lua"), "100000"],
               check=True, stdout=subprocess.DEVNULL)
print("stream: %.1f MB" % (os.path.getsize(rec) / 1e6))


def timed(args):
    best = None
    for _ in range(3):
        out = os.path.join(tmp, "time")
        subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", out, ljm] + args,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        secs, kb = open(out).read().split()[-2:]
        run = (float(secs), int(kb))
        best = run if best is None or run[0] < best[0] else best
    return best


pb = os.path.join(tmp, "out.pb.gz")
cases = [
    ("convert -f pprof", ["convert", "-q", "-o", pb, rec]),
    ("convert -f pprof --from 0", ["convert", "-q", "--from", "0", "-o", pb, rec]),
    ("convert -f pprof --from -0.5s", ["convert", "-q", "--from", "-0.5s", "-o", pb, rec]),
    ("report", ["report", "-q", rec]),
    ("top --once", ["top", "--once", rec]),
    ("top (following)", ["top", rec]),
    ("top --once --lifetime leaked", ["top", "--once", "--lifetime", "leaked", rec]),
    ("top --lifetime leaked", ["top", "--lifetime", "leaked", rec]),
]
for name, args in cases:
    secs, kb = timed(args)
    print("%-32s %6.2f s  %7.1f MB" % (name, secs, kb / 1024))
