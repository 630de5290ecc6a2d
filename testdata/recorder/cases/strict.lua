-- A strict _G (errors on unknown globals) must not break start/stop: the
-- recorder reads globals raw.
jit.off()
jit = nil
setmetatable(_G, {__index = function(_, k) error("undefined global " .. tostring(k), 2) end,
                  __newindex = function(_, k) error("assign to undeclared " .. tostring(k), 2) end})
assert(misc.memprof.start(arg[1]))
local t = {} for i = 1, 10 do t[i] = {} end
assert(misc.memprof.stop())
print("strict ok")
