-- A coroutine's Lua stack grown by the thread that resumes it: arguments
-- copied in by coroutine.resume (200 of them), by the function
-- coroutine.wrap returns, and values passed back by yield. Every Lua
-- stack reallocation is INTERNAL in the reference.
jit.off()
collectgarbage()
assert(misc.memprof.start("costack.ljm"))

local args = {}
for i = 1, 200 do args[i] = i end

local function body(...)
  local n = select("#", ...)
  while true do
    n = coroutine.yield(n)
    if not n then return end
  end
end

for r = 1, 20 do
  local co = coroutine.create(body)
  coroutine.resume(co, unpack(args))
  coroutine.resume(co, unpack(args))
  coroutine.resume(co)
end

for r = 1, 20 do
  local f = coroutine.wrap(body)
  f(unpack(args))
  f(unpack(args))
  f()
end

args = nil
collectgarbage()
assert(misc.memprof.stop())
