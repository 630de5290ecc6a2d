-- bursts.lua: 10 bursts of allocations, each followed by ~50 ms of work
-- that allocates nothing (heaptrack's Consumed chart must stay flat there).
local keep = {}
local function burst(k)
  for i = 1, 2000 do keep[#keep + 1] = {k, i} end   -- 5
end
local function idle(seconds)
  local t0, x = os.clock(), 0
  while os.clock() - t0 < seconds do x = x + 1 end  -- 9: no allocation
  return x
end
for k = 1, 10 do
  burst(k)
  idle(0.05)
end
