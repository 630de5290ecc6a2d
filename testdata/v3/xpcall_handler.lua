-- xpcall(fail, handler, i) with a Lua message handler that calls debug.traceback
-- (not as a tail call): 60 errors in the main thread, 60 inside a coroutine.wrap.
jit.off()
collectgarbage()
assert(misc.memprof.start("xpcall_handler.ljm"))

local function fail(i)
  error("boom " .. i)
end

local function handler(e)
  local tb = debug.traceback(tostring(e), 2)
  return tb
end

local msgs = {}
for i = 1, 60 do
  local _, msg = xpcall(fail, handler, i)
  msgs[i] = msg
end

-- The same loop inside a coroutine (new numbers: new message strings).
local co = coroutine.wrap(function()
  for i = 61, 120 do
    local _, msg = xpcall(fail, handler, i)
    msgs[i] = msg
  end
end)
co()

msgs = nil
collectgarbage()
assert(misc.memprof.stop())
