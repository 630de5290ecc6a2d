-- app.lua -- the example's handlers: memory that grows and memory that
-- does not. /leak keeps every request's record in a module-level table
-- (what "what keeps growing?" should find); /work only allocates temporaries,
-- /lru fills a cache. The tests count on one record table per /leak request.
local M = {}

local kept = {}  -- grows forever: one record per /leak request

function M.leak()
  local n = #kept + 1
  kept[n] = { n = n, uri = ngx.var.request_uri }  -- line 11: the leak
  ngx.say("kept ", n)
end

function M.work()
  local parts = {}
  for i = 1, 20 do
    parts[i] = string.format("%d:%d", i, ngx.worker.pid())
  end
  ngx.say(table.concat(parts, ","))
end

-- Recent items in OpenResty's resty.lrucache, made at the first /lru
-- request: it fills to 1000 items, then only replaces (memory that grows
-- and levels off, not a leak).
local lru_cache
local lru_n = 0

function M.lru()
  lru_cache = lru_cache or assert(require("resty.lrucache").new(1000))
  lru_n = lru_n + 1
  local key = "item" .. (lru_n % 5000)  -- more keys than room: old ones go
  local item = lru_cache:get(key)
  if not item then
    item = { key = key, at = lru_n }
    lru_cache:set(key, item)
  end
  ngx.say(key, " ", item.at)
end

return M
