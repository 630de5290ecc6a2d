-- Everything at once, JIT on (arg[1] = "on") or off: metamethods, errors,
-- hooks, finalizers, callbacks from C, coroutines, stack growth, load.
local ffi = require("ffi")
local mode = arg[1]
if mode == "off" then jit.off() else jit.on(); jit.opt.start("hotloop=5") end
-- metamethods allocating
local mt = {__index = function(t, k) return {k} end, __newindex = function(t, k, v) rawset(t, k, {v}) end,
            __concat = function(a, b) return {a, b} end, __call = function(self, x) return {x} end}
local o = setmetatable({}, mt)
for i = 1, 2000 do local _ = o[i]; o[i] = i; local c = o .. "x"; local d = o(i) end
-- pcall / error / xpcall handlers
for i = 1, 500 do
  pcall(error, {i})
  xpcall(function() error("e" .. i) end, function(m) return {m, debug.traceback()} end)
end
-- hooks
local n = 0
debug.sethook(function() n = n + 1; local t = {n} end, "", 100)
for i = 1, 20000 do local t = {i} end
debug.sethook()
-- finalizers
for i = 1, 200 do local u = newproxy(true); getmetatable(u).__gc = function() local t = {i} end end
collectgarbage()
-- gsub callbacks, sort comparators
local s = string.rep("abc ", 1000)
s = s:gsub("%a+", function(w) return w:upper() .. "!" end)
local arr = {} for i = 1, 500 do arr[i] = tostring(math.random(1000)) end
table.sort(arr, function(a, b) return (a .. "") < (b .. "") end)
-- coroutines nested, wrap, errors inside
local function gen(k) return coroutine.wrap(function() for i = 1, k do coroutine.yield({i}) end end) end
for i = 1, 100 do local g = gen(10); for _ = 1, 10 do g() end end
local co = coroutine.create(function() local t = {} ; error({"x"}) end)
for i = 1, 50 do coroutine.resume(coroutine.create(function() local c2 = coroutine.wrap(function() coroutine.yield({}) end); c2(); error("boom") end)) end
-- ffi callbacks
local cmp = ffi.cast("int (*)(const void *, const void *)", function(a, b) local t = {1}; return ffi.cast("int*", a)[0] - ffi.cast("int*", b)[0] end)
ffi.cdef[[void qsort(void *base, size_t n, size_t sz, int (*cmp)(const void *, const void *));]]
local buf = ffi.new("int[?]", 300) for i = 0, 299 do buf[i] = 300 - i end
ffi.C.qsort(buf, 300, 4, cmp)
cmp:free()
-- deep recursion, stack growth, load
local function rec(k) if k == 0 then return {} end local r = rec(k - 1) return r end
rec(5000)
for i = 1, 100 do assert(loadstring("return {" .. i .. "}"))() end
-- string.dump + load
local f = loadstring(string.dump(function() return {1} end))
f()
print("done", n)
