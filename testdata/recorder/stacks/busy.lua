-- busy.lua: allocates for about a second (time marks, RSS samples).
jit.off()
local keep = {}
local t0 = os.clock()
local i = 0
while os.clock() - t0 < 1.0 do
  i = i + 1
  keep[i % 50000] = {i, tostring(i)}                -- 8
end
print(i)
