-- filters_lib.lua -- the second source file of filters.lua.
local M = {}
function M.parse(n)
  local out = {}
  for i = 1, n do out[i] = { i } end
  return out
end
return M
