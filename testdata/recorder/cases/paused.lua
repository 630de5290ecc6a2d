-- paused.lua -- ljm record --paused, driven by recorder/tests/paused_test.py:
-- four phases of 300 tables, each on a line of its own (20, 22, 24, 26);
-- after phase N the script writes phaseN.done and waits for the file goN.
-- The script keeps a debug hook of its own through it all; it prints how
-- often the hook ran by the end of each phase (interpreted code only: with
-- the JIT on, compiled loops run no count hooks).
local ffi = require("ffi")
ffi.cdef("int usleep(unsigned int usec);")
local calls = 0
local function hook() calls = calls + 1 end
debug.sethook(hook, "", 1000)
local keep = {}
local function step(n)
  print("phase", n, "hook calls", calls)
  io.stdout:flush()
  local f = io.open("phase" .. n .. ".done", "w")
  f:close()
  while true do f = io.open("go" .. n) if f then f:close() return end ffi.C.usleep(10000) end
end
for i = 1, 300 do keep[#keep + 1] = { i } end                    -- phase 1: paused
step(1)
for i = 1, 300 do keep[#keep + 1] = { i, i } end                 -- phase 2: recording 1
step(2)
for i = 1, 300 do keep[#keep + 1] = { i, i, i } end              -- phase 3: paused
step(3)
for i = 1, 300 do keep[#keep + 1] = { i, i, i, i } end           -- phase 4: recording 2
local h, mask, count = debug.gethook()
assert(h == hook and mask == "" and count == 1000, "the script's own hook is gone")
print("phase", 4, "hook calls", calls)
print("phases done", #keep)
