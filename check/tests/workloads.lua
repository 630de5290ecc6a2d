-- workloads.lua -- clean workloads for ljm.check.no_leak: each call
-- leaves the heap as it found it, give or take growth that happens once.
-- check_test.py runs each a few times (check_cases.lua clean), and
-- bench/check/no_leak_bench.lua a hundred times. Returns {name = fn}.

local workloads = {}

workloads.strings_short = function()  -- short strings, many of them equal
  local n = 0
  for i = 1, 300 do n = n + #("key" .. (i % 50)) end
  return n
end

workloads.strings_long = function()  -- strings built from pieces, kilobytes long
  local t = {}
  for i = 1, 200 do t[i] = "piece" .. i end
  local s = table.concat(t, ",")
  return #(s:rep(3) .. s:upper())
end

workloads.table_churn = function()
  local t
  for i = 1, 300 do t = { i, i + 1, x = i, y = { i } } end
  return t.x
end

workloads.traces = function()  -- hot loops compile traces in the warmups
  local s = 0
  for i = 1, 20000 do s = s + (i % 7) * 2 end
  return s
end

workloads.coroutines = function()
  for i = 1, 20 do
    local co = coroutine.create(function(a) local b = coroutine.yield(a + 1) return b * 2 end)
    coroutine.resume(co, i)
    coroutine.resume(co, i)
  end
end

do  -- an LRU cache that fills to its cap within the first half, then stays
  local cap, cache, ring, pos, n = 30, {}, {}, 0, 0
  workloads.lru = function()
    n = n + 1
    local k = string.format("item%08d", n)  -- keys of one size: the cache stays one size
    pos = pos % cap + 1
    if ring[pos] then cache[ring[pos]] = nil end
    ring[pos] = k
    cache[k] = { n, string.rep("v", 40) }
  end
end

do  -- a buffer that doubles once, well inside the recorded half
  local buf, calls = {}, 0
  for i = 1, 64 do buf[i] = i end
  workloads.buffer_doubles = function()
    calls = calls + 1
    if calls == 75 then for i = 65, 128 do buf[i] = i end end
    return buf[1]
  end
end

do  -- string.buffer reused; a table buffer on VMs without it
  local ok, sbuf = pcall(require, "string.buffer")
  local b = ok and sbuf.new() or nil
  local t = {}
  workloads.buffer_reuse = function()
    if b then
      b:reset()
      for i = 1, 100 do b:put(i, ",") end
      return #b:tostring()
    end
    for i = 1, 100 do t[i] = i end
    return #table.concat(t, ",")
  end
end

workloads.gc_cycle = function()  -- enough garbage for the collector to run inside
  local x
  for i = 1, 3000 do x = { i, tostring(i) } end
  return x
end

workloads.closures = function()
  local fs = {}
  for i = 1, 100 do fs[i] = function() return i end end
  return fs[50]()
end

do  -- a batch that fills for 40 calls, then is flushed: the heap saws up and down
  local batch, calls = {}, 0
  workloads.batch = function()
    calls = calls + 1
    batch[#batch + 1] = { calls, "entry" }
    if #batch == 40 then batch = {} end
  end
end

return workloads
