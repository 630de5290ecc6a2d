#!/usr/bin/env python3
"""arena_room_test.py -- `ljm record` leaves LuaJIT's arena room to grow.

A binary-trees run (depth 15, JIT off) under `ljm record --sample 512k
--stacks`, and without stacks, faults about as many pages as under `luajit`
(at most 1.3 times; 0.94 to 1.16 here): the arena is one segment growing
down, not split by the CLI's library gaps or the recorder's own buffers
(cli/arena_room.h). Split, LuaJIT gives segments back and maps
them again: 1.4 to 2.3 times the faults. Each side is the median of three
runs, less the same program's run of an empty script.

usage: arena_room_test.py LJM
"""
import os
import statistics
import subprocess
import sys
import tempfile

LJM = os.path.abspath(sys.argv[1])
TREES = r"""
local function tree(d)
  if d == 0 then return {} end
  return {tree(d - 1), tree(d - 1)}
end
local function count(t)
  if not t[1] then return 1 end
  return 1 + count(t[1]) + count(t[2])
end
local depth = tonumber(arg[1])
local n = count(tree(depth + 1))  -- the heap grows, then shrinks
local long = tree(depth)
for d = 4, depth, 2 do
  for _ = 1, 2 ^ (depth - d + 4) do n = n + count(tree(d)) end
end
print(n + count(long))
"""
DEPTH = "15"  # 14 and less need too few segments to show it
failures = 0


def check(ok, what):
    global failures
    print("%s %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        failures += 1


def faults(cmd, env):
    """Minor page faults of cmd, the median of three runs."""
    got = []
    for _ in range(3):
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        if status != 0:
            sys.exit("arena_room_test: %s exited with %d" % (" ".join(cmd), status))
        got.append(ru.ru_minflt)
    return statistics.median(got)


def main():
    tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    script = os.path.join(tmp, "trees.lua")
    empty = os.path.join(tmp, "empty.lua")
    with open(script, "w") as f:
        f.write(TREES)
    with open(empty, "w") as f:
        f.write("\n")
    env = dict(os.environ, LUA_INIT="jit.off()")
    out = os.path.join(tmp, "out.ljm")
    base = faults(["luajit", script, DEPTH], env) - faults(["luajit", empty], env)
    check(base > 1000, "luajit: %d page faults in the run" % base)
    for opts in (["--sample", "512k", "--stacks"], ["--sample", "512k"]):
        rec = [LJM, "record"] + opts + ["-o", out]
        run = faults(rec + [script, DEPTH], env) - faults(rec + [empty], env)
        check(run <= 1.3 * base, "ljm record %s: %d page faults in the run, luajit %d"
              % (" ".join(opts), run, base))
    print("arena_room_test: %s" % ("FAILED" if failures else "passed"))
    sys.exit(1 if failures else 0)


main()
