-- ljm_pprof.lua -- Go's /debug/pprof/heap and /debug/pprof/allocs, made
-- from the running recordings of ljm_nginx.lua, for `go tool pprof URL`.
--
--   thread_pool ljm threads=1;                          (main context)
--   location /debug/pprof/ { content_by_lua_block { require("ljm_nginx").pprof() } }
--
-- in a server that listens on loopback only, as the control server of
-- on-demand.conf. Needs `lua_shared_dict ljm 64k;`, where each recording
-- worker leaves the name of its stream.
--
--   GET .../heap     the streams of all recording workers as one gzipped
--                    pprof profile: alloc_objects, alloc_space,
--                    inuse_objects, inuse_space (Go's heap profile; shown:
--                    inuse_space)
--   GET .../allocs   the same profile, shown: alloc_space
--   ?worker=N        worker N's stream alone (ngx.worker.id(): 0 to
--                    worker_processes - 1)
--   ?seconds=N       waits N seconds, then profiles those N seconds: the
--                    allocations made in them (a delta, as Go's
--                    allocs?seconds=N) and what is in use at their end
--                    (ljm convert --from -Ns, each stream ending at its
--                    worker's last poll; shown: alloc_space); needs
--                    recordings with time marks (stacks, sample or time)
--
-- The figures reach to each worker's last flush (the recording's flush
-- option: 1 s in the examples). The worker serving the request does not
-- decode: `ljm convert` runs in the thread pool (one conversion at a time
-- with threads=1), at a low priority (nice), and the worker only waits for
-- its result without blocking, then sends it.
local M = {}

local PROFILES = { heap = "inuse_bytes", allocs = "alloc_bytes" }

local function reply(status, msg)
  ngx.status = status
  ngx.header["Content-Type"] = "text/plain"
  ngx.say(msg)
end

-- Serves a profile; cfg: ljm_nginx's options (dict, ljm, pool, nice,
-- max_seconds).
function M.serve(cfg)
  local d = ngx.shared[cfg.dict]
  if not d then
    return reply(500, "ljm_nginx.pprof needs lua_shared_dict " .. cfg.dict)
  end
  local which = ngx.var.uri:match("([^/]+)$")
  local value = PROFILES[which or ""]
  if not value then
    return reply(404, "profiles here: heap, allocs (?worker=N, ?seconds=N)")
  end
  local args, aerr = ngx.req.get_uri_args(16)
  if aerr == "truncated" then
    return reply(400, "too many arguments: heap and allocs take worker and seconds")
  end
  local nworkers = ngx.worker.count()
  local worker, seconds
  if args.worker ~= nil then
    worker = type(args.worker) == "string" and args.worker:match("^%d+$") and tonumber(args.worker)
    if not worker or worker >= nworkers then
      return reply(400, "worker must be a number from 0 to " .. (nworkers - 1))
    end
  end
  if args.seconds ~= nil then
    seconds = type(args.seconds) == "string" and args.seconds:match("^%d+$") and tonumber(args.seconds)
    if not seconds or seconds < 1 or seconds > cfg.max_seconds then
      return reply(400, "seconds must be a whole number from 1 to " .. cfg.max_seconds)
    end
  end
  local function recording()
    local paths, untimed = {}, 0
    for id = worker or 0, worker or nworkers - 1 do
      local p = d:get("path:" .. id)
      if p then
        paths[#paths + 1] = p
        if not d:get("timed:" .. id) then untimed = untimed + 1 end
      end
    end
    return paths, untimed
  end
  local paths, untimed = recording()
  if #paths == 0 then
    return reply(worker and 404 or 503, worker and ("worker " .. worker .. " is not recording")
                 or "no worker is recording (ljm_nginx.always{}, or /ljm/start on demand)")
  end
  if seconds then
    if untimed > 0 then
      return reply(400, "seconds: the recording has no time marks (record with stacks, "
                   .. "sample or time)")
    end
    ngx.sleep(seconds)
    paths = recording()
    if #paths == 0 then
      return reply(503, "the recording stopped meanwhile")
    end
  end
  local job = { paths = paths, ljm = cfg.ljm, nice = cfg.nice, seconds = seconds,
                value = seconds and "alloc_bytes" or value }
  local ok, prof, err, status = ngx.run_worker_thread(cfg.pool, "ljm_pprof_thread", "convert", job)
  if not ok then
    return reply(500, "ljm: thread pool " .. cfg.pool .. ": " .. tostring(prof))
  end
  if not prof then
    return reply(status or 500, tostring(err))
  end
  ngx.header["Content-Type"] = "application/octet-stream"
  ngx.header["Content-Disposition"] = 'attachment; filename="' .. which .. '"'
  ngx.header["X-Content-Type-Options"] = "nosniff"
  ngx.print(prof)
end

return M
