-- app.lua -- the example's handlers: memory that grows and memory that
-- does not. /leak keeps every request's record in a module-level table
-- (what "what keeps growing?" should find); /work only allocates
-- temporaries. The tests count on one record table per /leak request.
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

return M
