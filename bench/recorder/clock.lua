-- clock.lua: the benchmark drivers' clocks (dofile'd): returns wall(),
-- tcpu() and faults(): seconds of CLOCK_MONOTONIC and of
-- CLOCK_THREAD_CPUTIME_ID, and the process's minor page faults so far.
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } ljm_timespec;
int clock_gettime(int clk, ljm_timespec *ts);
typedef struct { long times[4]; long maxrss, ixrss, idrss, isrss, minflt, rest[9]; } ljm_rusage;
int getrusage(int who, ljm_rusage *ru);
]]
local ts = ffi.new("ljm_timespec")
local ru = ffi.new("ljm_rusage")
local function clock(id)
  ffi.C.clock_gettime(id, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end
local function faults()
  ffi.C.getrusage(0, ru)  -- RUSAGE_SELF
  return tonumber(ru.minflt)
end
return function() return clock(1) end, function() return clock(3) end, faults
