-- snapshot.lua OUTDIR: known structures, then heap snapshots (snapshot_test.py
-- checks them): OUTDIR/heap.ljh after a full collection, OUTDIR/grown.ljh
-- after the cache grew, and a snapshot in the middle of a --stacks recording.
local rec = require "ljm.recorder"
local ffi = require "ffi"
local out = arg[1]

cache = {}                                    -- a module cache of 10000 strings
for i = 1, 10000 do cache[i] = "cached string " .. i end

local Point = {__name = "Point"}              -- objects with a metatable
Point.__index = Point
points = {}
for i = 1, 100 do points[i] = setmetatable({x = i, y = -i}, Point) end

suspended = coroutine.create(function()       -- a suspended coroutine holding a table
  local held = {"held by a coroutine"}
  coroutine.yield()
  return held
end)
coroutine.resume(suspended)

weak = setmetatable({}, {__mode = "k"})       -- weak keys: not what keeps them alive
for i = 1, 10 do weak[points[i]] = true end

cycle = (function()                           -- a cycle (no local left on the stack)
  local a, b = {}, {}
  a.other, b.other = b, a
  return a
end)()

local function counter()                      -- a closure with an upvalue
  local n = {count = 0, tag = ("counter state %d"):format(7)}
  return function() n.count = n.count + 1; return n.count end
end
tick = counter()

buffer = ffi.new("uint8_t[4096]")             -- cdata
session = newproxy(true)                      -- a userdata named by its metatable
getmetatable(session).__name = "Session"
local has_sbuf, sbuf_lib = pcall(require, "string.buffer")  -- not in Tarantool's fork
if has_sbuf then
  sbuf = sbuf_lib.new()                       -- a string buffer and its own memory
  sbuf:put(string.rep("b", 100000))
end

owner = {}                                    -- a value under an object key
owned = {[owner] = {}}

collectgarbage()
collectgarbage()
print("count", collectgarbage("count") * 1024)
print("heap", rec.snapshot(out .. "/heap.ljh"))

for i = 10001, 20000 do cache[i] = "cached string " .. i end
for i = 1, 100 do owned[owner][i] = {i} end   -- grows under the same key
collectgarbage()
collectgarbage()
print("grown", rec.snapshot(out .. "/grown.ljh"))

-- In the middle of a recording with stacks: the recording goes on intact
-- (JIT off: the test counts events by line).
jit.off()
assert(rec.start(out .. "/during.ljm", {stacks = true}))
local keep = {}
for i = 1, 1000 do keep[i] = {i} end          -- before the snapshot
local dpath = out .. "/during.ljh"
local c0 = collectgarbage("count")
local snapped = rec.snapshot(dpath)           -- the snapshot: no allocation here
local c1 = collectgarbage("count")
for i = 1, 1000 do keep[i] = {i, i} end       -- after it
assert(rec.stop())
print("during", snapped)
print("gc unchanged", c0 == c1)

print("bad", rec.snapshot("/nonexistent-dir/x.ljh"))
