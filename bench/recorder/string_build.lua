-- String building: concatenation, string.format, table.concat, gsub.
local N = tonumber(arg and arg[1]) or 200000
local acc = 0
for i = 1, N do
  local s = "item-" .. i .. "-" .. (i * 7)
  local f = string.format("%s:%d:%08x", s, i, i)
  local parts = {s, f, tostring(i)}
  local j = table.concat(parts, ",")
  acc = acc + #j + #(j:gsub("-", "_"))
end
return acc
