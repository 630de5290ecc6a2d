-- torture.lua -- JIT-heavy work for recording with call stacks: hundreds
-- of traces and side traces, the trace array growing and flushed (by
-- jit.flush() and by a small maxtrace), stacks growing under traces,
-- coroutines, errors (coroutine.resume with no argument over a collected
-- thread's slot), FFI allocations and finalizers, GC steps.
-- With LJM_TORTURE_LABELS set, under labels too: each phase in
-- with_labels, labels set in coroutines, in FFI callbacks, in finalizers
-- and around errors (misc.memprof's, when the recorder provides it).
-- usage: torture.lua [ROUNDS]
local ROUNDS = tonumber(arg and arg[1]) or 3
local ffi = require "ffi"
jit.on()
jit.opt.start("hotloop=2", "hotexit=2")
local rec = os.getenv("LJM_TORTURE_LABELS") and misc and misc.memprof
if rec and not rec.label then rec = nil end
local function under(t, fn, ...)
  if rec then return rec.with_labels(t, fn, ...) end
  return fn(...)
end
local function label(k, v) if rec then rec.label(k, v) end end

local sink, nsink = {}, 0
local function keep(v)
  nsink = nsink % 5000 + 1
  sink[nsink] = v
end

-- Many distinct loops, each its own chunk: hundreds of root traces, and
-- side traces from the branch that flips half way.
local function many_chunks(n, tag)
  for i = 1, n do
    local src = ("local keep, k = ... local t = {} for j = 1, 120 do "
      .. "if j %% %d == 0 then t[#t + 1] = {j, %q} else t[#t + 1] = j .. %q end end "
      .. "keep(t) return #t"):format(i % 7 + 2, tag .. i, tag)
    local f = assert(load(src, "=chunk_" .. tag .. i))
    f(keep, i)
  end
end

-- Recursion deep enough to grow the stack, called from a hot loop.
local function deep(n, acc)
  if n == 0 then return {acc} end
  local r = deep(n - 1, acc .. "x")
  return r
end

local function coro_work(k)
  local co = coroutine.wrap(function(a)
    for i = 1, 200 do
      label("co", tostring(i % 5))
      a = coroutine.yield({i, a}) or a
      if i % 50 == 0 then keep(deep(60 + i % 30, "c")) end
    end
  end)
  for i = 1, 200 do keep(co(k + i)) end
  local c2 = coroutine.create(function(...)
    local t = {...}
    for i = 1, 100 do t[#t + 1] = coroutine.yield(#t) end
    return t
  end)
  local args = {}
  for i = 1, 120 do args[i] = i end
  coroutine.resume(c2, unpack(args))
  for i = 1, 100 do coroutine.resume(c2, {i}) end
end

local function dead_coroutine()
  local co = coroutine.create(function() return {} end)
  coroutine.resume(co)
end

local function errors(n)
  local caught = 0
  for i = 1, n do
    if i % 50 == 0 then  -- resume with no argument: a dead thread's slot below
      dead_coroutine()
      collectgarbage()
      keep({pcall(coroutine.resume)})
    end
    local ok, e = pcall(function()
      if i % 3 == 0 then error({code = i}) end
      if i % 3 == 1 then error("boom " .. i) end
      return {i}
    end)
    if not ok then caught = caught + 1; keep(e) end
  end
  return caught
end

ffi.cdef [[ typedef struct { double x, y; int tag[16]; } pt_t; ]]
local pt_t = ffi.typeof("pt_t")
local function ffi_work(n)
  local finalised = 0
  for i = 1, n do
    local p = pt_t(i, -i)
    p.tag[i % 16] = i
    if i % 10 == 0 then
      keep(ffi.gc(ffi.new("char[?]", 64 + i % 200), function()
        finalised = finalised + 1
        label("gc", i % 2 == 0 and "even" or nil)
      end))
    else
      keep(p)
    end
  end
  return finalised
end

-- Lua called back from C (qsort through the FFI): the callback allocates,
-- so the walk meets an FFI callback's continuation frame, whose PC slot
-- holds no bytecode PC.
ffi.cdef [[ void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)); ]]
local cmp_t = ffi.typeof("int (*)(const void *, const void *)")
local function callbacks(n)
  local made = 0
  local cmp = ffi.cast(cmp_t, function(a, b)
    local x, y = ffi.cast("const int *", a)[0], ffi.cast("const int *", b)[0]
    label("cb", tostring(x % 3))
    keep({x, y})
    made = made + 1
    return x < y and -1 or x > y and 1 or 0
  end)
  local arr = ffi.new("int[?]", n)
  for i = 0, n - 1 do arr[i] = (i * 7919) % n end
  ffi.C.qsort(arr, n, 4, cmp)
  cmp:free()
  for i = 1, n - 1 do assert(arr[i - 1] <= arr[i]) end
  return made
end

local function strings(n)
  local parts = {}
  for i = 1, n do
    parts[#parts + 1] = ("%d:%s"):format(i, ("ab"):rep(i % 17))
    if i % 100 == 0 then keep(table.concat(parts)); parts = {} end
  end
end

for round = 1, ROUNDS do
  local r = tostring(round)
  under({phase = "chunks", round = r}, many_chunks, 150, "r" .. round)
  for i = 1, 40 do keep(deep(100 + i, "d")) end
  under({phase = "coro"}, coro_work, round)
  under({phase = "errors"}, errors, 300)
  keep({pcall(under, {phase = "raise"}, error, "boom")})
  under({phase = "ffi"}, ffi_work, 2000)
  assert(under({phase = "callbacks"}, callbacks, 300) > 300)
  under({phase = "strings", round = r}, strings, 2000)
  label("cb", nil)
  label("co", nil)
  collectgarbage("step", 50)
  if round % 2 == 0 then jit.flush() end
  for i = 1, 300 do
    keep({i})
    if i % 60 == 0 then collectgarbage("step") end
    if i % 100 == 0 then jit.flush() end
  end
end

-- A small trace limit: the trace array fills up at a trace exit and every
-- trace is flushed from there (trace_findfree finds none).
jit.flush()
jit.opt.start("maxtrace=40", "hotloop=1", "hotexit=1")
many_chunks(120, "m")
coro_work(0)
errors(200)
collectgarbage()
print("ok", ROUNDS, nsink)
