-- chains.lua: allocations with known call chains (JIT off); the test
-- (recorder/tests/stacks_test.py) asserts chains by line number.
jit.off()
local N = 200
local sink = {}

local Account = {}
Account.__index = Account
function Account.new() return setmetatable({}, Account) end
function Account:deposit(n)
  local t = {n}                                     -- 11: leaf in a method
  return t
end

local function helper(n)
  local t = {n, n}                                  -- 16: leaf in a local function
  return t
end
local function outer(n)
  local r = helper(n)                               -- 20
  return r
end

local function deep(k)
  if k == 0 then return {k} end                     -- 25: leaf of the recursion
  local r = deep(k - 1)                             -- 26
  return r
end

local function rep_tail(n)
  return string.rep("x", n)                         -- 31: built-in, tail-called
end
local function lua_leaf(n)
  local t = {n, n, n}                               -- 34
  return t
end
local function lua_tail(n)
  return lua_leaf(n)                                -- 38: Lua tail call
end
G_tail = function(n) return lua_leaf(n) end         -- 40: called via a global

local acct = Account.new()
for i = 1, N do sink[1] = acct:deposit(i) end       -- 43
for i = 1, N do sink[2] = outer(i) end              -- 44
for i = 1, N do sink[3] = deep(5) end               -- 45
for i = 1, N do sink[4] = rep_tail(100 + i) end     -- 46
for i = 1, N do sink[5] = lua_tail(i) end           -- 47
for i = 1, N do sink[6] = G_tail(i) end             -- 48

local function producer(n)
  for i = 1, n do coroutine.yield({i}) end          -- 51
end
local co = coroutine.create(producer)
for _ = 1, N do coroutine.resume(co, N) end         -- 54
local gen = coroutine.wrap(function()
  for i = 1, N do coroutine.yield({i, i}) end       -- 56
end)
for _ = 1, N do gen() end                           -- 58
local inner = coroutine.wrap(function()
  for i = 1, N do coroutine.yield({i, 0}) end       -- 60
end)
local outerco = coroutine.create(function()
  for _ = 1, N do inner() end                       -- 63
end)
coroutine.resume(outerco)                           -- 65

local function in_pcall(n)
  local t = {n, 1}                                  -- 68
  return t
end
for i = 1, N do pcall(in_pcall, i) end              -- 71
local proxy = setmetatable({}, {__index = function(_, k)
  return {k, 2}                                     -- 73: __index function
end})
for i = 1, N do sink[7] = proxy[i] end              -- 75
local function va(...)
  local t = {...}                                   -- 77: vararg function
  return t
end
for i = 1, N do sink[8] = va(i, i) end              -- 80
