-- String-heavy work for memprof_same_vm_test: interning (values repeated
-- every few hundred iterations are made again only once collected, so
-- their counts follow GC pacing), concatenation, string.format, rep, sub,
-- upper, gsub with a Lua callback, gmatch, table.concat, tostring.
jit.off()
collectgarbage()
assert(misc.memprof.start("strings.ljm"))

local keep = {}
for i = 1, 100000 do
  local k = "key" .. (i % 997)
  local s = ("%d:%s"):format(i, k)
  local r = string.rep("ab", i % 300 + 1)
  local head = s:sub(1, 3)
  local big = r .. s
  if i % 100 == 0 then
    keep[#keep + 1] = big:upper()
  end
end

local parts = {}
for i = 1, 5000 do
  parts[i] = tostring(i * 3)
end
local joined = table.concat(parts, ",")
local n = 0
local marked = joined:gsub("%d+", function(d)
  n = n + 1
  return "<" .. d .. ">"
end)
local words = {}
for w in marked:gmatch("<(%d+)>") do
  words[#words + 1] = w
end

keep, parts, joined, marked, words = nil
collectgarbage()
assert(misc.memprof.stop())
