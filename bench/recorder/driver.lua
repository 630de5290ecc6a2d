-- driver.lua MODE WORKLOAD SIZE [OUT]: runs a workload with the JIT off,
-- either plain (MODE=off) or recorded with require "ljm.recorder"
-- (MODE=rec: the standard stream; MODE=stacks: the extended stream with
-- call stacks, time and RSS; MODE=time: {time = true}, time and RSS
-- without stacks; MODE=sampled: {sample = "512k", stacks = true},
-- a sampled stream with stacks, seeded with LJM_BENCH_SEED if set; all to
-- OUT; MODE=loaded: the module is loaded and nothing recorded; with
-- LJM_BENCH_LABEL set, rec.label("plugin", its value) right after the
-- start: every allocation under a label set). Prints
-- "<wall s> <cpu s> <thread cpu s> <minor page faults>" of the run, from
-- just before start() to just after stop() (the final flush): process CPU
-- includes the recorder's writer thread, thread CPU is the program's own
-- thread only.
local mode, workload, size, out = arg[1], arg[2], arg[3], arg[4]
local wall, tcpu, faults = dofile((arg[0]:match("^(.*)/") or ".") .. "/clock.lua")
jit.off()
jit.flush()
local chunk = assert(loadfile(workload))
local rec = mode ~= "off" and require("ljm.recorder")
if mode == "loaded" then rec = nil end
local opts = mode == "stacks" and {stacks = true}
  or mode == "time" and {time = true}
  or mode == "sampled" and {sample = os.getenv("LJM_BENCH_SAMPLE") or "512k",
                            stacks = os.getenv("LJM_BENCH_STACKS") ~= "0" or nil,
                            seed = tonumber(os.getenv("LJM_BENCH_SEED"))} or nil
collectgarbage()
local w0, c0, t0, f0 = wall(), os.clock(), tcpu(), faults()
if rec then assert(rec.start(out, opts)) end
if rec and os.getenv("LJM_BENCH_LABEL") then assert(rec.label("plugin", os.getenv("LJM_BENCH_LABEL"))) end
arg = {[0] = workload, size}
chunk(size)
if rec then assert(rec.stop()) end
local w1, c1, t1, f1 = wall(), os.clock(), tcpu(), faults()
io.write(string.format("%.6f %.6f %.6f %d\n", w1 - w0, c1 - c0, t1 - t0, f1 - f0))
