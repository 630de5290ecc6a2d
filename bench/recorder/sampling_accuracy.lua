-- sampling_accuracy.lua: a deterministic program that allocates about 1 GB
-- (JIT off) over lines of different shapes, for sampling_accuracy.py.
if jit then jit.off() end
local keep = {}
local function small(n, r) local t = {} for i = 1, n do t[i] = "k" .. i .. "." .. r .. string.rep("a", i % 60) end return t end
local function rows(n) local t = {} for i = 1, n do t[i] = {i, i * 2, i * 3, name = "r", v = i} end return t end
local function blobs(n, r) local t = {} for i = 1, n do t[i] = string.rep("b", 60000 + i * 13 + r) end return t end
local function grow(n) local t = {} for i = 1, n do t[#t + 1] = i end return t end
local function closures(n) local t = {} for i = 1, n do t[i] = function() return i end end return t end
local function medium(n, r) local t = {} for i = 1, n do t[i] = string.rep("m", 900 + i % 700) .. r .. "." .. i end return t end
for r = 1, 27 do
  local a, b, c = small(60000, r), rows(40000), blobs(150, r)
  local d, e, f = grow(400000), closures(30000), medium(4000, r)
  keep[r % 3] = {a, b, c, d, e, f}
end
