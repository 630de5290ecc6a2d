-- grow.lua [SECONDS]: a program that grows while ljm top watches it
-- (tests/top_test.py): leaky keeps every string it makes, cached keeps the
-- last 500, temp's tables are garbage at once. SECONDS (default 8) of ten
-- steps each, 0.1 s apart.
local leak, cache = {}, {}
local function sleep(s) local e = os.clock() + s; while os.clock() < e do end end
local function leaky(i) leak[#leak + 1] = string.rep("L", 200) .. i end
local function cached(i) cache[i % 500] = string.rep("C", 300) .. i end
local function temp(i) local t = {} for j = 1, 20 do t[j] = j * i end return #t end
local n = tonumber(arg[1]) or 8
for s = 1, n * 10 do
  for i = 1, 200 do leaky(s * 1000 + i); cached(s * 1000 + i); temp(i) end
  sleep(0.1)
end
