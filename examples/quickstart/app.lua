-- The quick start's program: a request handler whose cache never lets go
-- (the leak) and whose rendering makes short-lived strings (the churn).
-- README.md records it with `ljm record` and reads it in each viewer.
local Cache = {}
Cache.__index = Cache

function Cache.new()
  return setmetatable({ items = {}, n = 0 }, Cache)
end

function Cache:put(key, value)
  self.items[key] = value
  self.n = self.n + 1
end

-- Temporary strings: garbage the collector frees again.
local function render(id)
  local parts = {}
  for i = 1, 8 do
    parts[i] = ("%s:%d"):format(id, i)
  end
  return table.concat(parts, ",")
end

-- One request: the rendered page is kept in the cache for ever.
local function handle(cache, id)
  local page = render(id)
  cache:put(id, { id = id, page = page })
end

local cache = Cache.new()
for n = 1, 20000 do
  handle(cache, "user" .. n)
end
print(("cached %d pages, Lua heap %.1f MB"):format(cache.n, collectgarbage("count") / 1024))
