-- filters.lua -- allocations whose stacks and sizes are known by construction,
-- for tests/filters_test.py (recorded with -joff: each allocation at its line).
--   render (line 12)   200 strings of about 2000 bytes, kept to the end
--   lib.parse          300 small tables made in filters_lib.lua, kept
--   scratch (line 16)  2000 short strings, dropped at once
-- arg[1]: seconds over which render's strings are made (default 0), so that
-- ljm growth sees them grow steadily.
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path
local lib = require("filters_lib")
local keep = {}
local function render(i)
  return string.rep("r", 2000) .. i
end
local function scratch(n)
  local s
  for i = 1, n do s = "s" .. i end
  return s
end
local spread, t0 = tonumber(arg[1]) or 0, os.clock()
for i = 1, 200 do
  keep[#keep + 1] = render(i)
  while os.clock() < t0 + spread * i / 200 do end
end
local parsed = lib.parse(300)
scratch(2000)
collectgarbage()
return #keep + #parsed
