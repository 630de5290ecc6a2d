-- GC-paced work for memprof_same_vm_test: no full collection until the
-- end, so how far the incremental collector has got decides some counts:
-- finalizers that allocate (newproxy __gc, ffi.gc) run when it reaches
-- them, a weak cache refills what it cleared, strings are made again once
-- collected. Garbage enough for several cycles on top of the 8 MiB the
-- profiler holds.
jit.off()
local ffi = require("ffi")
collectgarbage()
assert(misc.memprof.start("gc_pacing.ljm"))

local finalized = {}
local cache = setmetatable({}, {__mode = "v"})
local function cached(k)
  local v = cache[k]
  if not v then
    v = {k}
    cache[k] = v
  end
  return v
end

local mt = {__gc = function(u) finalized[#finalized + 1] = {} end}
for i = 1, 300000 do
  local t = {i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i}
  local c = cached(i % 500)
  local s = "v" .. (i % 2000)
  if i % 50 == 0 then
    local u = newproxy(true)
    getmetatable(u).__gc = mt.__gc
  end
  if i % 70 == 0 then
    ffi.gc(ffi.new("int[4]"), function() finalized[#finalized + 1] = "f" .. i end)
  end
end

collectgarbage()
collectgarbage()
assert(misc.memprof.stop())
