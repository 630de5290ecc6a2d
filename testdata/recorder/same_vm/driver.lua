-- driver.lua MODE SCRIPT OUT (memprof_same_vm_test.py): runs SCRIPT, a
-- reference corpus script in the current directory, with its
-- misc.memprof.start(path)/stop() calls made by MODE's profiler, writing
-- OUT instead of the script's own file:
--   native  Tarantool's misc.memprof;
--   ljmkit  require "ljm.recorder", with an 8 MiB FFI block held from
--           right before start until right after stop: misc.memprof
--           holds its 8 MiB stream buffer in the Lua heap (lj_mem_new,
--           counted by the GC) while it records, and GC pacing follows;
--   both    both profilers recording the same run: misc.memprof to
--           OUT.native, started first (its buffer is the block held),
--           ljm.recorder to OUT, stopped first.
-- Everything else is the same in every mode, down to the lengths of the
-- strings the driver makes in the native and ljmkit modes (the MODE names
-- are as long, the OUT paths should be): both modules are loaded before
-- the script runs, the script is dofile()d with arg[0] = SCRIPT, and
-- recording starts and stops where the script says.
local mode, script, out = arg[1], arg[2], arg[3]
assert(mode == "native" or mode == "ljmkit" or mode == "both",
       "usage: driver.lua native|ljmkit|both SCRIPT OUT")
local ffi = require("ffi")
local rec = require("ljm.recorder")
local memprof = assert(misc and misc.memprof, "no misc.memprof: not Tarantool's VM")
local HOLD = 8 * 1024 * 1024
local hold

local start, stop
if mode == "native" then
  start = function() return memprof.start(out) end
  stop = function() return memprof.stop() end
elseif mode == "ljmkit" then
  start = function()
    hold = ffi.new("uint8_t[?]", HOLD)
    return rec.start(out)
  end
  stop = function()
    local ok, err, code = rec.stop()
    hold = nil
    return ok, err, code
  end
else
  start = function()
    local ok, err, code = memprof.start(out .. ".native")
    if not ok then return ok, err, code end
    return rec.start(out)
  end
  stop = function()
    local ok, err, code = rec.stop()
    if not ok then return ok, err, code end
    return memprof.stop()
  end
end

misc.memprof = {start = start, stop = stop}
arg = {[0] = script}
dofile(script)
