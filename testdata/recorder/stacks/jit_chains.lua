-- jit_chains.lua: allocations on a trace (JIT on).
local function work(n)
  local t = {}
  for i = 1, n do t[i] = {i, i} end                 -- 4: becomes a trace
  return t
end
local function caller()
  for _ = 1, 40 do work(2000) end                   -- 8
end
caller()                                            -- 10
