-- app.lua N OUT: a program whose heap ljm heap must explain (tests/heap_views_test.py):
-- a module cache of N entries, sessions in a global, 200 objects named by their
-- metatable, a suspended coroutine holding a local, a large main-chunk local;
-- then a heap snapshot to OUT.
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path
local sessmod = require "sessmod"
local rec = require "ljm.recorder"
local Point = { __name = "Point" }
local function new_point(x, y) return setmetatable({ x = x, y = y }, Point) end
sessions = {}
for i = 1, 50 do sessions[i] = { id = i, buf = string.rep("s", 100) .. i } end
points = {}
for i = 1, 200 do points[i] = new_point(i, i) end
worker = coroutine.create(function()
  local held = { "held by the worker", string.rep("w", 5000) }
  coroutine.yield()
  return held
end)
coroutine.resume(worker)
local n = tonumber(arg[1])
for i = 1, n do sessmod.put("key" .. i, string.rep("v", 200) .. i) end
local big = {}
for i = 1, 100 do big[i] = string.rep("b", 300) .. i end
collectgarbage()
collectgarbage()
assert(rec.snapshot(arg[2]))
print(#big)
