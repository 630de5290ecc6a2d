-- clock.lua: the benchmark drivers' clocks (dofile'd): returns wall() and
-- tcpu(), seconds of CLOCK_MONOTONIC and of CLOCK_THREAD_CPUTIME_ID.
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } ljm_timespec;
int clock_gettime(int clk, ljm_timespec *ts);
]]
local ts = ffi.new("ljm_timespec")
local function clock(id)
  ffi.C.clock_gettime(id, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end
return function() return clock(1) end, function() return clock(3) end
