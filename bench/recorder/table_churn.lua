-- Table churn: short-lived tables with array and hash parts, growth,
-- closures, a ring of live objects so the GC keeps sweeping.
local N = tonumber(arg and arg[1]) or 300000
local ring, acc = {}, 0
for i = 1, N do
  local t = {i, i + 1, name = "n", id = i}
  t.extra = {x = i, y = i * 2}
  for k = 1, i % 16 do t[#t + 1] = k end
  local f = function() return t.id end
  ring[i % 512] = t
  acc = acc + f() + #t
end
return acc
