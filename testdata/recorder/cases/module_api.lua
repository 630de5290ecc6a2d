-- The Lua module (require "ljm.recorder") under stock luajit: results
-- and errors mirror misc.memprof. arg[1] = scratch directory.
local dir = assert(arg[1], "usage: luajit module_api.lua DIR")
local rec = require("ljm.recorder")
jit.off()
local failed = false
local function check(cond, what)
  if not cond then
    io.stderr:write("FAIL ", what, "\n")
    failed = true
  end
end

local ok, msg, code = rec.stop()
check(ok == nil and msg == "profiler is not running" and code == 22, "stop without start")
check(rec.is_running() == false, "is_running before start")

local keep = assert(io.open(dir .. "/keep.txt", "w"))
keep:write("precious")
keep:close()

check(rec.start(dir .. "/module.ljm") == true, "start")
check(rec.is_running() == true, "is_running after start")
ok, msg, code = rec.start(dir .. "/keep.txt")
check(ok == nil and msg == "profiler is running already" and code == 22, "double start")
local t = {}
for i = 1, 500 do
  t[i] = {i}  -- line 28: 500 allocations
end
check(rec.stop() == true, "stop")
local f = assert(io.open(dir .. "/keep.txt"))
check(f:read("*a") == "precious", "a failed start must not truncate the file")
f:close()

local bad = dir .. "/no/such/dir/x.ljm"
ok, msg, code = rec.start(bad)
check(ok == nil and msg == bad .. ": No such file or directory" and code == 2, "bad path")
check(rec.is_running() == false, "is_running after failed start")

for k = 1, 5 do
  check(rec.start(dir .. "/cycle" .. k .. ".ljm") == true, "cycle start " .. k)
  local u = {}
  for i = 1, 100 do u[i] = {k} end  -- line 43
  check(rec.stop() == true, "cycle stop " .. k)
end

-- /dev/full: the first 8 MiB buffer cannot be written; the program goes on.
check(rec.start("/dev/full") == true, "start /dev/full")
local s = {}
for i = 1, 1500000 do s[i % 100] = {i} end  -- > 2 buffers of events
check(rec.is_running() == false, "recording ends at the write error")
ok, msg, code = rec.stop()
check(ok == nil and msg == "/dev/full: No space left on device" and code == 28,
      "stop after write error: " .. tostring(msg) .. " " .. tostring(code))
check(rec.start(dir .. "/after_full.ljm") == true, "start after write error")
check(rec.stop() == true, "stop after write error")

-- Left running: os.exit() must still complete the stream.
check(rec.start(dir .. "/atexit.ljm") == true, "start before exit")
X = {}
for i = 1, 100 do X[i] = {i} end  -- line 61
print(failed and "module_api: FAILED" or "module_api: ok")
os.exit(failed and 1 or 0)
