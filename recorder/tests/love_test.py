#!/usr/bin/env python3
"""love_test.py -- a game records itself with call stacks: LÖVE (Debian's
love 11.4, which runs on whichever libluajit-5.1.so.2 it finds: the VM
under test) on its own Xvfb loads "ljm.recorder" and records 120 frames of
testdata/recorder/love (its boot and callback Lua, C++ objects freed by
finalizers, a Lua callback that LÖVE's FFI code calls, a coroutine,
JIT-compiled noise loops), several times exact and as many sampled at
4 KiB. Every run must end by itself with stop() true and leave a complete
extended stream that follows decoder/EXTENSION.md with LÖVE's Lua and C
functions in its stacks.
usage: love_test.py SOFILE GAME_MAIN_LUA"""
import os
import signal
import subprocess
import sys

import testlib
import xvfb  # tests/lib/xvfb.py

RUNS = int(os.environ.get("LJM_LOVE_RUNS", "3"))
RATE = 4096
FRAMES = 120

res = testlib.Results("love")
so = testlib.runfile(sys.argv[1])
game = os.path.dirname(testlib.runfile(sys.argv[2]))
work = testlib.scratch("love")
source = open(os.path.join(game, "main.lua")).read().splitlines()


def line_of(marker):
    """The line of main.lua that holds marker (the checks follow the file)."""
    return next(i + 1 for i, text in enumerate(source) if marker in text)


CALLBACK, MAPPIXEL = line_of("local t = {x, y, r}"), line_of("img:mapPixel(shade)")


def start_xvfb():
    """An Xvfb server of our own, and its display."""
    rfd, wfd = os.pipe()
    log = open(os.path.join(work, "xvfb.log"), "w")
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(wfd), "-screen", "0", "640x480x24",
                             "-nolisten", "tcp", "-s", "0"],
                            stdout=log, stderr=log, pass_fds=(wfd,), start_new_session=True)
    os.close(wfd)
    shown = xvfb.display(rfd)
    if not shown:
        proc.kill()
        sys.exit("love_test: Xvfb did not start: %s"
                 % open(os.path.join(work, "xvfb.log")).read()[-500:])
    return proc, shown


server, display = start_xvfb()
env = testlib.module_cpath(so, "love_cpath")
env.update(DISPLAY=display, HOME=work, XDG_DATA_HOME=work, XDG_CONFIG_HOME=work,
           SDL_AUDIODRIVER="dummy", LJM_FRAMES=str(FRAMES))
try:
    for i in range(2 * RUNS):
        sampled = i >= RUNS
        out, done = testlib.recording_env(env, work, "love", i, RATE if sampled else None)
        p = subprocess.run(["love", game], capture_output=True, text=True, cwd=work, env=env,
                           timeout=300, stdin=subprocess.DEVNULL)
        said = open(done).read().strip().split(None, 5) if os.path.exists(done) else []
        if not res.check(p.returncode == 0 and said[:2] == ["ok", "nil"],
                         "run %d: exit %d, done %r, output %r"
                         % (i, p.returncode, " ".join(said)[-1500:],
                            (p.stdout + p.stderr)[-1500:])):
            continue
        # 120 frames; 12 images of 32 x 32 pixels through the callback.
        res.check(said[2:5] == [str(FRAMES), str(12 * 32 * 32), "12"],
                  "run %d: the game's figures %r" % (i, said))
        res.check(len(said) == 6 and testlib.build_is_vm_flavour(said[5]),
                  "run %d: the recorder found the VM under test, not %r" % (i, said[5:]))
        st = testlib.host_stream(res, i, out, RATE if sampled else None)
        labels = [label for parent, label in st.nodes.values()]
        res.check(any(x.startswith('=[love "boot.lua"]:') for x in labels) and
                  any(x.startswith("@main.lua:") for x in labels),
                  "run %d: LÖVE's boot.lua and the game's main.lua in the stacks" % i)
        with_stack = sum(1 for e in st.events if e.stack)
        res.check(with_stack >= 0.95 * len(st.events) and
                  len(st.events) > (500 if sampled else 50000),
                  "run %d: %d of %d events with a stack" % (i, with_stack, len(st.events)))
        if sampled:
            continue
        # Each sampled run's few hundred samples may miss any one line;
        # the exact runs must show all of these.
        res.check(any(x.startswith("TRACE") for x in labels), "run %d: trace frames" % i)
        res.check({"C:love.graphics.newCanvas", "C:love.image.newImageData",
                   "C:love.data.compress", "C:coroutine.yield"} <= set(labels),
                  "run %d: LÖVE's C functions by their Lua names: %s"
                  % (i, sorted(x for x in set(labels) if x.startswith("C:love"))[:12]))
        # The callback's allocation, under LÖVE's mapPixel (ImageData.lua),
        # under the line of main.lua that called it.
        chains = [c for c in st.chains() if c and c[0] == "@main.lua:%d" % CALLBACK]
        res.check(any(len(c) > 2 and c[1].startswith('=[love "ImageData.lua"]:') and
                      "@main.lua:%d" % MAPPIXEL in c for c in chains),
                  "run %d: callback <- ImageData.lua <- main.lua:%d: %s"
                  % (i, MAPPIXEL, chains[:2]))
finally:
    os.killpg(server.pid, signal.SIGTERM)
    server.wait()

res.finish()
