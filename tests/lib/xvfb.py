"""xvfb.py -- the display of an Xvfb started with -displayfd (shared by the
tests that run a program on a server of their own: the server picks a free
display, so tests running side by side never race for one)."""
import os
import select
import time


def display(rfd, seconds=15):
    """Reads the display number Xvfb writes to rfd (the pipe's read end,
    closed here); ':N', or None if none came within seconds."""
    number, deadline = b"", time.time() + seconds
    try:
        while not number.endswith(b"\n") and time.time() < deadline:
            if select.select([rfd], [], [], 0.2)[0]:
                chunk = os.read(rfd, 16)
                if not chunk:
                    break
                number += chunk
    finally:
        os.close(rfd)
    return ":" + number.strip().decode() if number.strip().isdigit() else None
