#!/usr/bin/env python3
"""nvim_test.py -- a real application records itself with call stacks:
Neovim (Debian's neovim, which runs on whichever libluajit-5.1.so.2 it
finds: the VM under test) loads "ljm.recorder" and records its own
runtime Lua (vim.lsp, vim.treesitter, vim.inspect, vim.split, 20000
buffer lines, JIT-heavy chunks) under `nvim --headless -u NONE`, several
times. Every run must finish (nvim alive to the end, stop() true), and
leave a complete extended stream that follows decoder/EXTENSION.md with
Neovim's runtime files and traces in its stacks. Half as many runs again
record sampled at 4 KiB (many samples, each walking a stack that the
unwritten calls in between changed), seeded per run.
usage: nvim_test.py SOFILE NVIM_RECORD_LUA"""
import os
import subprocess
import sys

import testlib

RUNS = int(os.environ.get("LJM_NVIM_RUNS", "6"))

res = testlib.Results("nvim")
so = testlib.runfile(sys.argv[1])
script = testlib.runfile(sys.argv[2])
work = testlib.scratch("nvim")
env = testlib.module_cpath(so, "nvim_cpath")
env["HOME"] = work  # no user configuration, no shada
env["XDG_CONFIG_HOME"] = env["XDG_DATA_HOME"] = env["XDG_STATE_HOME"] = work

RATE = 4096
for i in range(RUNS + RUNS // 2):
    sampled = i >= RUNS
    out, done = testlib.recording_env(env, work, "nvim", i, RATE if sampled else None)
    p = subprocess.run(["nvim", "--headless", "-u", "NONE", "-i", "NONE", "-n",
                        "-c", "luafile " + script, "-c", "qa!"],
                       capture_output=True, text=True, cwd=work, env=env, timeout=300,
                       stdin=subprocess.DEVNULL)
    said = open(done).read().split() if os.path.exists(done) else []
    if not res.check(p.returncode == 0 and said[:1] == ["ok"],
                     "run %d: exit %d, done %r, stderr %r"
                     % (i, p.returncode, said, (p.stdout + p.stderr)[-1500:])):
        continue
    # 20000 lines "line N alpha,beta,gamma": 4 + 5 + 4 + 5 letters each.
    res.check(said[3:5] == ["20000", "360000"], "run %d: the workload's figures %r" % (i, said))
    st = testlib.host_stream(res, i, out, RATE if sampled else None)
    labels = [label for parent, label in st.nodes.values()]
    res.check(any("vim/lsp/protocol.lua" in x for x in labels),
              "run %d: vim/lsp/protocol.lua in the stacks" % i)
    res.check(any("vim/inspect.lua" in x for x in labels), "run %d: vim/inspect.lua" % i)
    res.check(sum(1 for x in labels if x.startswith("TRACE")) >= 10,
              "run %d: trace frames" % i)
    # nvim is stripped: its functions no symbol covers are named by the
    # program and offset, never "main+..." (which reads like the symbol main).
    res.check(not any(x.startswith("C:main+") for x in labels) and
              any(x.startswith("C:nvim+0x") for x in labels),
              "run %d: nvim's unnamed functions read nvim+0x...: %s"
              % (i, sorted({x for x in labels if "+0x" in x})[:4]))
    with_stack = sum(1 for e in st.events if e.stack)
    res.check(with_stack >= 0.95 * len(st.events) and len(st.events) > (2000 if sampled else 50000),
              "run %d: %d of %d events with a stack" % (i, with_stack, len(st.events)))

res.finish()
