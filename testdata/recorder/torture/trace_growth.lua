-- trace_growth.lua -- the trace array grows at a trace exit (issue 19):
-- trace_findfree reallocates J->trace while the exiting trace is the
-- stack's leaf. Recorded with --stacks this crashed the host.
-- usage: trace_growth.lua [K]
local K = tonumber(arg and arg[1]) or 14
local sink = {}
for i = 1, K do
  local f = load("local t = {} for j = 1, 300 do t[j] = {j} end return t")
  sink[i] = f()
end
local function work(n)
  local t, acc = {}, 0
  for i = 1, n do
    if i > 100 then acc = acc + 1; t[#t+1] = {i} else acc = acc - 1 end
  end
  return acc, t
end
for r = 1, 3 do work(400) end
print("ok", K)
