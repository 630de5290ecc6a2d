-- driver.lua MODE WORKLOAD SIZE [OUT]: runs a workload with the JIT off,
-- either plain (MODE=off) or recorded with require "ljm.recorder"
-- (MODE=rec, stream to OUT). Prints "<wall s> <cpu s>" of the run,
-- from just before start() to just after stop() (the final flush).
local mode, workload, size, out = arg[1], arg[2], arg[3], arg[4]
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } ljm_timespec;
int clock_gettime(int clk, ljm_timespec *ts);
]]
local ts = ffi.new("ljm_timespec")
local function wall()
  ffi.C.clock_gettime(1, ts)  -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end
jit.off()
jit.flush()
local chunk = assert(loadfile(workload))
local rec = mode == "rec" and require("ljm.recorder")
collectgarbage()
local w0, c0 = wall(), os.clock()
if rec then assert(rec.start(out)) end
arg = {[0] = workload, size}
chunk(size)
if rec then assert(rec.stop()) end
local w1, c1 = wall(), os.clock()
io.write(string.format("%.6f %.6f\n", w1 - w0, c1 - c0))
