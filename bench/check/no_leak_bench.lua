-- no_leak_bench.lua [RUNS] -- ljm.check.no_leak's false positives and
-- cost (not a test: it prints figures). Runs check.no_leak RUNS times
-- (100) on each clean workload of check/tests/workloads.lua, JIT on and off,
-- and prints the failures of each; then, for leaks every P calls (P from
-- 2 to 20), at how many of the P phases of the call counter no_leak misses
-- them; then times no_leak's default 100 iterations of a function that
-- takes about 1 ms, against the function's own 103 calls.
--
--   LUA_PATH='check/?.lua;;' LUA_CPATH='bazel-bin/recorder/?.so;bazel-bin/check/?.so;;' \
--     luajit bench/check/no_leak_bench.lua 100
local check = require("ljm.check")
local runs = tonumber(arg[1] or "100")
local workloads = dofile("check/tests/workloads.lua")

local now = dofile("bench/recorder/clock.lua")  -- wall clock (CLOCK_MONOTONIC), seconds

local names = {}
for name in pairs(workloads) do names[#names + 1] = name end
table.sort(names)
local total, failed = 0, 0
for _, mode in ipairs({ "on", "off" }) do
  jit[mode]()
  for _, name in ipairs(names) do
    local bad = 0
    for _ = 1, runs do
      local ok, report = check.no_leak(workloads[name])
      if not ok then
        bad = bad + 1
        if bad <= 2 then
          local h = check.last_report().heap
          local t = {}
          for i = 1, #h do t[i] = string.format("%d", h[i] - h[1]) end
          print(report .. "\nheap after each iteration, from the first: " .. table.concat(t, " "))
        end
      end
    end
    total, failed = total + runs, failed + bad
    print(string.format("jit %-3s %-16s %d false positives in %d runs", mode, name, bad, runs))
  end
end
print(string.format("all: %d false positives in %d runs", failed, total))

-- Leaks every P calls, at each phase of the counter.
for _, p in ipairs({ 2, 5, 8, 10, 12, 15, 20 }) do
  local missed = 0
  for phase = 0, p - 1 do
    local kept, calls = {}, phase
    local ok = check.no_leak(function()
      calls = calls + 1
      if calls % p == 0 then kept[#kept + 1] = { calls } end
    end)
    if ok then missed = missed + 1 end
  end
  print(string.format("a leak every %2d calls: missed at %d of %d phases", p, missed, p))
end

-- A function of about 1 ms (JIT off, so it stays about that long).
jit.off()
local function work()
  local t = {}
  for i = 1, 17000 do t[i] = { i } end
  return #t
end
local reps, t0 = 0, now()
while now() - t0 < 0.2 do work() reps = reps + 1 end
local per = (now() - t0) / reps
local t1 = now()
assert(check.no_leak(work))
local took = now() - t1
print(string.format("no_leak of a %.2f ms function, 100 iterations: %.2f s wall (the calls alone: %.2f s)",
                    per * 1000, took, per * 103))
