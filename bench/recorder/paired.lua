-- paired.lua MODE DEPTH PAIRS OUT: the steady cost of a wrapper, measured
-- in one process. PAIRS times, binary-trees DEPTH (JIT off) runs once
-- wrapped and once not, in alternating order; each run's thread CPU time
-- covers the workload only (start and stop are timed apart). Short runs
-- side by side see the same machine: on a VM whose speed drifts by 20%
-- between seconds, the ratio of neighbours is steadier than best-of.
-- MODE: sampled (require "ljm.recorder", {sample = LJM_BENCH_SAMPLE or
-- "512k", stacks = LJM_BENCH_STACKS ~= "0"}, to OUT), rec (an exact
-- recording, the standard stream, to OUT), stacks (exact, {stacks = true})
-- or pass (the bare pass-through of ljm_bench_pass.so). Prints the ratios' quartiles and,
-- for sampled, the median start + stop time in ms.
local mode, depth, pairs, out = arg[1], arg[2] or "10", tonumber(arg[3] or "300"), arg[4]
jit.off()
jit.flush()
local here = arg[0]:match("^(.*)/") or "."
local wall, tcpu = dofile(here .. "/clock.lua")
local chunk = assert(loadfile(here .. "/binary_trees.lua"))
arg = {[0] = here .. "/binary_trees.lua", depth}  -- the workload reads its depth there
local on, off
if mode == "sampled" then
  local rec = require("ljm.recorder")
  local opts = {sample = os.getenv("LJM_BENCH_SAMPLE") or "512k",
                stacks = os.getenv("LJM_BENCH_STACKS") ~= "0" or nil}
  on = function() assert(rec.start(out, opts)) end
  off = function() assert(rec.stop()) end
elseif mode == "rec" or mode == "stacks" then
  local rec = require("ljm.recorder")
  local opts = mode == "stacks" and {stacks = true} or nil
  on = function() assert(rec.start(out, opts)) end
  off = function() assert(rec.stop()) end
elseif mode == "pass" then
  local pass = require("ljm_bench_pass")
  on, off = pass.on, pass.off
else
  error("mode must be sampled, rec, stacks or pass")
end
local edges = {}
local function run(wrapped)
  collectgarbage()
  local s0 = wall()
  if wrapped then on() end
  local s1 = wall()
  local t0 = tcpu()
  chunk(depth)
  local t1 = tcpu()
  local s2 = wall()
  if wrapped then
    off()
    edges[#edges + 1] = (s1 - s0) + (wall() - s2)
  end
  return t1 - t0
end
local ratios = {}
for i = 1, pairs do
  local w, p
  if i % 2 == 1 then w = run(true); p = run(false) else p = run(false); w = run(true) end
  ratios[i] = w / p
end
table.sort(ratios)
table.sort(edges)
local function q(t, f) return t[math.floor((#t - 1) * f) + 1] end
io.write(string.format("%.4f %.4f %.4f %.3f\n", q(ratios, 0.25), q(ratios, 0.5), q(ratios, 0.75),
                       q(edges, 0.5) * 1000))
