-- split.lua -- known bytes under two labels, for sampled estimates per label
-- (labels_test.py): under kind=tables 200,000 tables of 4 array slots kept,
-- under kind=strings 4,000 distinct strings of 1,000 bytes kept, then all
-- dropped; the JIT as the command line says.
local rec = misc.memprof
local keep = {}
rec.with_labels({kind = "tables"}, function()
  for i = 1, 200000 do keep[#keep + 1] = {i, i, i, i} end
end)
rec.with_labels({kind = "strings"}, function()
  local pad = string.rep("s", 990)
  for i = 1, 4000 do keep[#keep + 1] = pad .. string.format("%010d", i) end
end)
keep = nil
collectgarbage()
print("split: ok")
