-- types.lua -- allocations whose types are known by construction, for
-- tests/types_test.py. Each "make" function below makes N things of one
-- kind and keeps them in a holder sized in advance (table.new), so that
-- what it leaves in use at the end is known:
--   tables      N empty tables                      N table
--   colocated   N tables {i, i, i}                  N table
--   arrays      N tables grown to 40 array slots    N table, N table.array
--   hashes      N tables grown to 20 string keys    N table, N table.hash
--                                                   (and the 20 key strings)
--   strings     N strings "s<i>x"                   N string
--   closures    N closures of one upvalue each      N function, N upvalue
--   threads     N coroutines suspended 200 deep     N thread, N thread.stack
--                                                   (and deep(), a closure)
--   userdata    N newproxy() objects                N userdata
--   cdata       N ffi.new structs and arrays        N cdata (when there is an FFI)
--   buffers     N string.buffer objects, 50 puts    N userdata, N buffer
--                                                   (when string.buffer exists)
--   protos      N chunks load()ed, each kept        N function, N prototype,
--                                                   N string (its chunk name)
-- The test reads the stream's types of the blocks in use at the end, by
-- the function that made them (a trace: the function it starts in).
-- arg[1]: N (default 300).
local N = tonumber(arg and arg[1]) or 300
local new = require("table.new")
local has_ffi, ffi = pcall(require, "ffi")
local has_buf, sbuf = pcall(require, "string.buffer")
local made = {}

local function tables(hold)
  for i = 1, N do hold[i] = {} end
end

local function colocated(hold)
  for i = 1, N do hold[i] = {i, i, i} end
end

local function arrays(hold)
  for i = 1, N do
    local a = {}
    for j = 1, 40 do a[j] = j end
    hold[i] = a
  end
end

local function hashes(hold)
  for i = 1, N do
    local h = {}
    for j = 1, 20 do h["key" .. j] = j end
    hold[i] = h
  end
end

local function strings(hold)
  for i = 1, N do hold[i] = "s" .. i .. "x" end
end

local function closures(hold)
  for i = 1, N do
    local u = i
    hold[i] = function() return u end
  end
end

local function threads(hold)
  local function deep(n)
    if n == 0 then return coroutine.yield(n) end
    return 1 + deep(n - 1)
  end
  for i = 1, N do
    local co = coroutine.create(deep)
    coroutine.resume(co, 200)
    hold[i] = co
  end
end

local function userdata(hold)
  for i = 1, N do hold[i] = newproxy(false) end
end

-- C types declared once, out of the makers (the C parser's blocks are
-- internal).
local Struct = has_ffi and ffi.typeof("struct { int a; double b; char c[20]; }")
local Doubles = has_ffi and ffi.typeof("double[?]")
local Aligned = has_ffi and ffi.typeof("struct __attribute__((aligned(64))) { int x; }")

local function cdata(hold)
  for i = 1, N do
    if i % 3 == 0 then
      hold[i] = Struct(i)
    elseif i % 3 == 1 then
      hold[i] = Doubles(8 + i % 8)
    else
      hold[i] = Aligned(i)
    end
  end
end

local function buffers(hold)
  for i = 1, N do
    local b = sbuf.new()
    for j = 1, 50 do b:put("item", j, ";") end
    hold[i] = b
  end
end

local function protos(hold)
  for i = 1, N do hold[i] = load("return " .. i) end
end

local makers = {
  {"tables", tables}, {"colocated", colocated}, {"arrays", arrays}, {"hashes", hashes},
  {"strings", strings}, {"closures", closures}, {"threads", threads},
  {"userdata", userdata}, {"protos", protos},
}
if has_ffi then makers[#makers + 1] = {"cdata", cdata} end
if has_buf then makers[#makers + 1] = {"buffers", buffers} end
for _, m in ipairs(makers) do
  local hold = new(N, 0)
  m[2](hold)
  made[m[1]] = hold
end
collectgarbage()
collectgarbage()
local names = {}
for _, m in ipairs(makers) do names[#names + 1] = m[1] end
io.write(table.concat(names, " "), "\n")
