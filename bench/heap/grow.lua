-- grow.lua MB OUT: builds a heap of about MB megabytes of typical objects
-- (records with string fields and a small array, in a registry of sessions),
-- then takes a heap snapshot to OUT and prints what it measured:
--   heap_bytes snapshot_seconds rss_before_kb peak_rss_kb
local rec = require "ljm.recorder"
local ffi = require "ffi"
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } ljm_ts;
int clock_gettime(int clk, ljm_ts *ts);
]]
local mb, out = tonumber(arg[1]), arg[2]

local function now()
  local ts = ffi.new("ljm_ts")
  ffi.C.clock_gettime(1, ts)  -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

local function status(key)
  for line in io.lines("/proc/self/status") do
    local v = line:match("^" .. key .. ":%s*(%d+)")
    if v then return tonumber(v) end
  end
end

sessions = {}
local i = 0
while collectgarbage("count") < mb * 1024 do
  for _ = 1, 1000 do
    i = i + 1
    sessions[i] = {id = i, user = "user " .. i, path = "/api/v1/items/" .. (i % 977),
                   tags = {"t" .. (i % 13), "t" .. (i % 17)}}
  end
end
collectgarbage()
collectgarbage()
local heap = collectgarbage("count") * 1024
local f = io.open("/proc/self/clear_refs", "w")  -- resets the peak RSS (VmHWM)
if f then f:write("5"); f:close() end
local before = status("VmRSS")
local t0 = now()
assert(rec.snapshot(out))
local t1 = now()
print(string.format("%d %.3f %d %d", heap, t1 - t0, before, status("VmHWM")))
