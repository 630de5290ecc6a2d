-- Hosts that misbehave (require "ljm.recorder" under stock luajit).
-- Finalizers that stop and start recordings while the GC runs nearly all
-- the time. A start makes Lua calls (pushes, the registry) whose GC step
-- may run such a finalizer inside it: that call is refused with EDEADLK
-- instead of waiting for ever on the lock the start holds. arg[1] = scratch directory, arg[2] = rounds.
local rec = require "ljm.recorder"
local dir, rounds = arg[1], tonumber(arg[2] or 100)
local main_path, gc_path, opt = dir .. "/fin_main.ljm", dir .. "/fin_gc.ljm", {}
local busy, other = 0, 0
local function finalizer()
  rec.stop()
  local _, _, code = rec.start(gc_path, opt)
  if code == 35 then busy = busy + 1 else other = other + 1 end  -- EDEADLK
end
collectgarbage("setpause", 10)
collectgarbage("setstepmul", 1000)
for i = 1, rounds do
  -- Between the starts and stops nothing but the proxy is allocated, so
  -- most GC steps, and the finalizers they run, come inside them.
  getmetatable(newproxy(true)).__gc = finalizer
  rec.start(main_path, opt)
  rec.stop()
end
collectgarbage("setpause", 200)
collectgarbage("setstepmul", 200)
collectgarbage()
collectgarbage()
rec.stop()
print(string.format("module_finalizers: %d refused (EDEADLK), %d not, running %s",
                    busy, other, tostring(rec.is_running())))

-- A host that kept the recorder's wrapper (lua_getallocf while it
-- recorded) and puts it back after the stop: the next start must not wrap
-- the wrapper in itself (it recursed until the stack overflowed). The
-- recorder has two wrappers (sampled, exact): a kept one of either kind
-- is taken back by a start of the other, and the last stop leaves the
-- VM's own allocator.
do
  local ffi = require "ffi"
  ffi.cdef [[
    typedef void *(*ljm_test_alloc)(void *ud, void *ptr, size_t osize, size_t nsize);
    ljm_test_alloc lua_getallocf(void *L, void **ud);
    void lua_setallocf(void *L, ljm_test_alloc f, void *ud);
  ]]
  local ok, got = coroutine.resume(coroutine.create(function()
    local L = ffi.cast("void *", tonumber(tostring(coroutine.running()):match("0x%x+")))
    local ud = ffi.new("void *[1]")
    local function addr(f) return tonumber(ffi.cast("uintptr_t", f)) end
    local function churn()
      local t = {}
      for i = 1, 1000 do t[i % 10 + 1] = {i} end
    end
    local own = addr(ffi.C.lua_getallocf(L, ud))
    assert(rec.start(dir .. "/kept1.ljm", {sample = 1}))
    local kept, kept_ud = ffi.C.lua_getallocf(L, ud), ud[0]
    assert(rec.stop())
    ffi.C.lua_setallocf(L, kept, kept_ud)
    assert(rec.start(dir .. "/kept2.ljm", {sample = 1}))
    churn()
    assert(rec.stop())
    -- the exact wrapper kept and put back, then a sampled start, an exact one
    assert(rec.start(dir .. "/kept3.ljm"))
    kept, kept_ud = ffi.C.lua_getallocf(L, ud), ud[0]
    assert(rec.stop())
    ffi.C.lua_setallocf(L, kept, kept_ud)
    assert(rec.start(dir .. "/kept4.ljm", {sample = 1}))
    churn()
    assert(rec.stop())
    assert(rec.start(dir .. "/kept5.ljm"))
    churn()
    assert(rec.stop())
    assert(addr(ffi.C.lua_getallocf(L, ud)) == own, "the VM's own allocator back")
    return true
  end))
  print("module_finalizers: wrapper put back: " .. (ok and got == true and "ok" or tostring(got)))
end
