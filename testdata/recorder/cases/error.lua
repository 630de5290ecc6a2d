-- Fails at line 4 with a traceback.
local function boom(x)
  local t = {x}
  error("boom " .. #t)
end
boom(1)
