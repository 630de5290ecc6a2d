-- churn.lua [N]: allocates tables and strings, keeping a third of them
-- (JIT off, so that two runs record the same events).
jit.off()
local n = tonumber(arg and arg[1]) or 200000
local keep = {}
for i = 1, n do
  keep[#keep + 1] = { i, tostring(i) }
  if i % 3 ~= 0 then keep[#keep] = nil end
end
print(#keep)
