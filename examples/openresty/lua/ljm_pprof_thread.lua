-- ljm_pprof_thread.lua -- runs `ljm convert` for ljm_pprof.lua in nginx's
-- thread pool (ngx.run_worker_thread), so that the worker serving the
-- request never waits on it: this module is loaded into the pool's own Lua
-- VM, where blocking is allowed.
local M = {}

local function quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

local function size(path)
  local f = io.open(path, "rb")
  if not f then return 0 end
  local n = f:seek("end") or 0
  f:close()
  return n
end

-- Converts the streams job.paths into one pprof profile: ljm convert (the
-- command job.ljm) at nice job.nice, default sample type job.value,
-- job.seconds: the last seconds only. A stream that has written nothing
-- yet (a worker that has not flushed since it started) is left out.
-- Returns the profile, or nil, a one-line reason and an HTTP status.
function M.convert(job)
  local files = {}
  for _, p in ipairs(job.paths) do
    if size(p) > 0 then files[#files + 1] = quote(p) end
  end
  if #files == 0 then
    return nil, "no recording has written anything yet (each flushes every flush seconds)", 503
  end
  local cmd = string.format("nice -n %d %s convert -q -f pprof --value %s%s -o - %s",
                            job.nice, quote(job.ljm), job.value,
                            job.seconds and (" --from -" .. job.seconds .. "s") or "",
                            table.concat(files, " "))
  -- The profile goes to stdout (fd 3 inside); after it "\n<status> <line>":
  -- the exit status and the last line of stderr (the error: warnings come
  -- before it). No file of ours.
  local sh = "{ err=$( { " .. cmd .. "; } 2>&1 >&3 ); rc=$?; } 3>&1; " ..
             "printf '\\n%d %s' \"$rc\" \"$(printf '%s' \"$err\" | tail -n 1)\""
  local p, perr = io.popen(sh, "r")
  if not p then
    return nil, "cannot run ljm convert: " .. tostring(perr), 500
  end
  local out = p:read("*a") or ""
  p:close()
  local at, status, msg = out:match("()\n(%d+) ([^\n]*)$")
  if status == "0" then
    return out:sub(1, at - 1)
  end
  return nil, "ljm convert: " .. (msg ~= "" and msg or ("exit status " .. tostring(status))), 500
end

return M
