-- The quick start's program: a request handler whose cache never lets go
-- (the leak) and whose rendering makes short-lived strings (the churn).
-- README.md records it with `ljm record` and reads it in each viewer.
-- usage: luajit app.lua [REQUESTS]   (default 20000)
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

-- The application's state lives as long as the program: a global.
App = { cache = Cache.new() }
local requests = tonumber(arg and arg[1]) or 20000
for n = 1, requests do
  handle(App.cache, "user" .. n)
end
print(("cached %d pages, Lua heap %.1f MB"):format(App.cache.n, collectgarbage("count") / 1024))
