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

-- The pool's thread runs at nice n from the first job on, and the
-- conversions it starts inherit that (Linux keeps a nice value per thread):
-- no `nice` process per fetch. nil when the thread cannot be reniced, so the
-- command says `nice -n` itself.
local reniced
local function renice(n)
  if reniced == n then return true end
  local ok, ffi = pcall(require, "ffi")
  if not ok then return nil end
  pcall(ffi.cdef, "int gettid(void); int setpriority(int which, unsigned who, int prio);")
  local PRIO_PROCESS = 0
  local got, rc = pcall(function() return ffi.C.setpriority(PRIO_PROCESS, ffi.C.gettid(), n) end)
  if not got or rc ~= 0 then return nil end
  reniced = n
  return true
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
  local cmd = string.format("%s%s convert -q -f pprof --value %s%s -o - %s",
                            renice(job.nice) and "" or ("nice -n %d "):format(job.nice),
                            quote(job.ljm), job.value,
                            job.seconds and (" --from -" .. job.seconds .. "s") or "",
                            table.concat(files, " "))
  -- One pipe, one shell: stderr joins stdout, and the exit status follows as
  -- "\n<status>". ljm writes its warnings while it reads, the profile (gzip:
  -- its first bytes are 1f 8b, which no message has) at the end, and after
  -- it only an error. No file of ours.
  local p, perr = io.popen("exec 2>&1; " .. cmd .. "; printf '\\n%d' \"$?\"", "r")
  if not p then
    return nil, "cannot run ljm convert: " .. tostring(perr), 500
  end
  local out = p:read("*a") or ""
  p:close()
  local at, status = out:match("()\n(%d+)$")
  local from = out:find("\31\139", 1, true)
  if status == "0" and from and from < at then
    return out:sub(from, at - 1)
  end
  local msg = at and out:sub(1, at - 1):match("([^\n]*)\n?$") or ""
  if msg:find("%c") then msg = "" end  -- not a message: a profile's bytes
  return nil, "ljm convert: " .. (msg ~= "" and msg or ("exit status " .. tostring(status))), 500
end

return M
