#!/usr/bin/env python3
"""progress_cli_test.py -- the progress line of `ljm report` and `ljm convert`.

A stream of 400,000 events is fed to the command's standard input slowly
(about 1.5 s), so that decoding takes long enough for progress to show:

  * stderr on a terminal (a pty): progress lines appear ("-: ... read, ...
    M events/s") and the last thing written is the erase sequence, so the
    terminal is left clean; the report on stdout is complete;
  * the same with -q / --quiet: nothing on the terminal;
  * stderr to a pipe: nothing at all on stderr.

usage: progress_cli_test.py LJM
"""
import os
import pty
import select
import subprocess
import sys
import threading
import time

from checks import Checks
from ljmwrite import uleb

check = Checks("progress_cli_test")
LJM = os.path.abspath(sys.argv[1])
EVENTS = 400000


def stream():
    body = bytearray(b"ljs\x03\x00\x00\x00\x80ljm\x03\x00\x00\x00")
    for i in range(EVENTS // 2):  # INTERNAL alloc, then its free
        addr = uleb(0x10000 + 16 * i)
        body += b"\x05" + addr + b"\x20" + b"\x06" + addr + b"\x20"
    return bytes(body + b"\x80")


def feed(proc, data, seconds):
    """Writes data in pieces spread over 'seconds', then closes stdin."""
    pieces = 30
    step = len(data) // pieces + 1
    try:
        for i in range(0, len(data), step):
            proc.stdin.write(data[i:i + step])
            proc.stdin.flush()
            time.sleep(seconds / pieces)
        proc.stdin.close()
    except BrokenPipeError:
        pass


def run(args, data, tty):
    """Runs ljm ARGS - with slow stdin; returns (rc, stdout, stderr bytes)."""
    if tty:
        master, slave = pty.openpty()
        proc = subprocess.Popen([LJM] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=slave)
        os.close(slave)
    else:
        proc = subprocess.Popen([LJM] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
    t = threading.Thread(target=feed, args=(proc, data, 1.5))
    t.start()
    out_chunks = []
    reader = threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()))
    reader.start()
    err = b""
    if tty:
        while True:
            r, _, _ = select.select([master], [], [], 0.1)
            if r:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                err += chunk
            elif proc.poll() is not None:
                break
        os.close(master)
    else:
        err = proc.stderr.read()
    t.join()
    reader.join()
    proc.wait(timeout=60)
    return proc.returncode, b"".join(out_chunks), err


def main():
    data = stream()
    for cmd in (["report", "-"], ["convert", "-f", "json", "-o", "-", "-"]):
        name = cmd[0]
        rc, out, err = run(cmd, data, tty=True)
        check(rc == 0, "%s on a terminal: exit %d" % (name, rc))
        check(b"events/s" in err and b"-: " in err and b" read, " in err,
              "%s on a terminal: no progress line: %r" % (name, err[:200]))
        check(err.endswith(b"\r\x1b[K"), "%s: progress not erased at the end: %r" % (name, err[-40:]))
        check(b"\n" not in err, "%s: progress wrote a newline: %r" % (name, err[:200]))
        if name == "report":
            check(out.startswith(b"ALLOCATIONS\nINTERNAL: 200000 events\t+6400000B\t-0B\n"),
                  "report on a terminal: stdout %r" % out[:120])
        else:
            check(b'"alloc_count":200000' in out, "convert on a terminal: json %r" % out[:200])

        for q in ("-q", "--quiet"):
            rc, out, err = run([cmd[0], q] + cmd[1:], data, tty=True)
            check(rc == 0 and err == b"", "%s %s on a terminal: rc %d, stderr %r" % (name, q, rc, err[:100]))

        rc, out, err = run(cmd, data, tty=False)
        check(rc == 0 and err == b"", "%s with stderr to a pipe: rc %d, stderr %r" % (name, rc, err[:100]))
    return check.done(minimum=10)


if __name__ == "__main__":
    sys.exit(main())
