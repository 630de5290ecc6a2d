-- A cache that leaks through a module-level table: every way Lua names a
-- function appears once (tests/names_test.py checks the viewers' names).
jit.off()
local M = {}

local Cache = {}
Cache.__index = Cache

function Cache.new()
  return setmetatable({ items = {} }, Cache)
end

function Cache:put(key, value)
  self.items[key] = value
end

local function serialize(t)
  local s = table.concat(t, ",")
  return s
end

M.put = function(cache, i)
  cache:put(i, serialize({ i, i * 2, "payload" }))
end

local f = function(n)
  local parts = {}
  for i = 1, n do parts[i] = ("x%d"):format(i) end
  return parts
end

local cache = Cache.new()
for i = 1, 2000 do
  M.put(cache, i)
end
local kept = {}
for i = 1, 50 do
  kept[i] = f(20)
end
table.sort(kept, function(a, b) return #a[1] < #b[1] end)
LEAKED = { cache, kept }
