-- gateway.lua -- a gateway's request through three plugins, each wrapped by
-- ljm_nginx.plugin so that its memory carries plugin = <name>: auth and
-- metrics only make temporaries; audit keeps a record of about 2 KB per
-- request (the leak `ljm report --by plugin` names).
local ljm = require "ljm_nginx"

local M = {}

M.auth = ljm.plugin("auth", function()
  local token = ngx.var.http_authorization or "anonymous"
  local parts = {}
  for part in token:gmatch("%S+") do parts[#parts + 1] = part:lower() end
  return #parts > 0
end)

M.metrics = ljm.plugin("metrics", function()
  local fields = {}
  for i = 1, 10 do fields[i] = string.format("m%d=%d", i, ngx.worker.pid()) end
  return table.concat(fields, ",")
end)

local audit_log = {}  -- grows forever: one 2 KB record per request
local padding = string.rep("a", 2000)

M.audit = ljm.plugin("audit", function()
  local n = #audit_log + 1
  audit_log[n] = padding .. n  -- line 27: the record kept
end)

function M.handle()
  M.auth()
  M.metrics()
  M.audit()
  ngx.say("ok")
end

return M
