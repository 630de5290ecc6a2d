-- ljm_nginx.lua -- record the memory of nginx's Lua workers with ljmkit.
--
-- One stream per worker, named after the worker's pid, written by the
-- ljm.recorder module (installed by ljmkit's scripts/install.sh where
-- nginx's default lua_package_cpath finds it). Two ways:
--
--   always     init_worker_by_lua_block { require("ljm_nginx").always{...} }
--              exit_worker_by_lua_block { require("ljm_nginx").exit_worker() }
--              each worker records its whole life: ljm/worker-<pid>.ljm.gz
--
--   on demand  init_worker_by_lua_block { require("ljm_nginx").on_demand{...} }
--              exit_worker_by_lua_block { require("ljm_nginx").exit_worker() }
--              content_by_lua_block { require("ljm_nginx").control() } in a
--              server that only listens on loopback: GET /ljm/start?seconds=N
--              makes every worker record (ljm/ondemand-<n>-<pid>.ljm.gz) until
--              N seconds have passed or GET /ljm/stop; GET /ljm/status.
--              Needs `lua_shared_dict ljm 64k;`.
--
-- Options (both): dir (default <prefix>/ljm), suffix (".ljm.gz": compressed
-- on the recorder's writer thread, sampled on the worker's; ".ljm.zst",
-- ".ljm"), flush (seconds: what
-- a killed worker can lose at most; default 1), stacks (call stacks: the
-- extended stream), sample (bytes, e.g. "512k": a sampled recording, cheap
-- enough to leave on; every view shows estimates), poll (0.5 s: how often a write error, such as a full
-- disk, is looked for; it ends the recording, and is logged once, then).
-- on_demand also: max_seconds (600). time (true: time marks and no stacks,
-- the cheapest recording that keeps labels).
--
-- Go's profiling endpoints (ljm_pprof.lua): /debug/pprof/heap and
-- /debug/pprof/allocs from the running recordings, for go tool pprof:
--   pprof()    content_by_lua_block { require("ljm_nginx").pprof() } in a
--              location such as /debug/pprof/ of a server that only
--              listens on loopback; needs `thread_pool ljm threads=1;` and
--              `lua_shared_dict ljm 64k;`. Options: ljm (the ljm command,
--              "ljm"), pool ("ljm"), nice (10: the pool thread's, which
--              its conversions inherit).
--
-- Labels (doc/labels.md: whose memory it is), kept by recordings with
-- stacks, sample or time; plain calls otherwise:
--
--   handle(location, fn, ...)  fn(...) labelled phase = ngx.get_phase() and
--              location (a name of yours, not the URI: few distinct values):
--              content_by_lua_block { require("ljm_nginx").handle("api", require("gw").handle) }
--   plugin(name, fn)  fn wrapped to run labelled plugin = name:
--              local auth = require("ljm_nginx").plugin("auth", auth_handler)
local rec = require "ljm.recorder"

local M = {}

local cfg = {
  dir = nil,
  suffix = ".ljm.gz",
  flush = 1,
  stacks = false,
  sample = false,
  time = false,
  max_seconds = 600,
  poll = 0.5,
  dict = "ljm",
  ljm = "ljm",
  pool = "ljm",
  nice = 10,
}
local current      -- path of this worker's running recording
local current_gen  -- on demand: the request it follows
local labelled     -- the running recording keeps labels

local function configure(opts)
  for k, v in pairs(opts or {}) do
    if cfg[k] == nil and k ~= "dir" then error("ljm_nginx: unknown option " .. tostring(k), 3) end
    cfg[k] = v
  end
  cfg.dir = cfg.dir or (ngx.config.prefix() .. "ljm")
end

-- Where this worker's stream is, for ljm_pprof.lua: "path:<worker id>" =
-- the path, "timed:<worker id>" = whether it has time marks. A worker
-- that stops removes its own only: after a reload the new worker of the
-- same id may have registered first.
local function register(path, timed)
  local d, id = ngx.shared[cfg.dict], ngx.worker.id()
  if not (d and id) then return end
  if path then
    d:set("path:" .. id, path)
    d:set("timed:" .. id, timed and true or false)
  elseif d:get("path:" .. id) == current then
    d:delete("path:" .. id)
  end
end

local function start(name)
  local path = string.format("%s/%s-%d%s", cfg.dir, name, ngx.worker.pid(), cfg.suffix)
  local ok, err = rec.start(path, { flush = cfg.flush, stacks = cfg.stacks or nil,
                                     sample = cfg.sample or nil, time = cfg.time or nil })
  if not ok then
    ngx.log(ngx.ERR, "ljm: cannot record: ", err)
    return nil
  end
  current = path
  labelled = cfg.stacks or cfg.sample or cfg.time
  register(path, labelled)
  ngx.log(ngx.NOTICE, "ljm: recording to ", path, " (", rec.build(), ")")
  return path
end

local function stop()
  if not current then return end
  local path = current
  register(nil)
  current, labelled = nil, nil
  local ok, err = rec.stop()
  if ok then
    ngx.log(ngx.NOTICE, "ljm: recorded ", path)
  else
    ngx.log(ngx.ERR, "ljm: ", err)  -- err is "<path>: <strerror>"
  end
end

-- A write error (a full disk) has ended the recording: say so now, once,
-- not when the worker exits.
local function failed()
  return current and not rec.is_running()
end

-- The label tables of handle, made once per phase and location.
local handle_labels = {}

-- fn(...) labelled with the request's phase and location (a *_by_lua handler).
function M.handle(location, fn, ...)
  if not labelled then return fn(...) end
  location = tostring(location)  -- a label's value is a string
  local phase = ngx.get_phase()
  local by_phase = handle_labels[phase]
  if not by_phase then
    by_phase = {}
    handle_labels[phase] = by_phase
  end
  local t = by_phase[location]
  if not t then
    t = { phase = phase, location = location }
    by_phase[location] = t
  end
  return rec.with_labels(t, fn, ...)
end

-- fn wrapped to run labelled plugin = name (a plugin's handler).
function M.plugin(name, fn)
  local t = { plugin = tostring(name) }
  return function(...)
    if not labelled then return fn(...) end
    return rec.with_labels(t, fn, ...)
  end
end

-- Records this worker's whole life (init_worker_by_lua*).
function M.always(opts)
  configure(opts)
  if not start("worker") then return end
  local ok, err = ngx.timer.every(cfg.poll, function(premature)
    if not premature and failed() then stop() end
  end)
  if not ok then ngx.log(ngx.ERR, "ljm: cannot start the timer: ", err) end
end

-- Ends this worker's recording (exit_worker_by_lua*): a complete stream.
function M.exit_worker()
  stop()
end

-- Follows the shared request: record while a generation is set and its
-- time limit has not passed.
local function follow(premature)
  local d = ngx.shared[cfg.dict]
  local gen, limit = d:get("gen"), d:get("until")
  local want = not premature and gen and limit and ngx.now() < limit and gen or nil
  if current and (want ~= current_gen or failed()) then stop() end
  if want and want ~= current_gen then start("ondemand-" .. want) end
  current_gen = want
end

-- Starts following /ljm/start and /ljm/stop in this worker (init_worker_by_lua*).
function M.on_demand(opts)
  configure(opts)
  if not ngx.shared[cfg.dict] then
    error("ljm_nginx: on_demand needs lua_shared_dict " .. cfg.dict, 2)
  end
  local ok, err = ngx.timer.every(cfg.poll, follow)
  if not ok then ngx.log(ngx.ERR, "ljm: cannot start the timer: ", err) end
end

-- The control location (content_by_lua*): /ljm/start?seconds=N, /ljm/stop,
-- /ljm/status. Put it in a server that listens on 127.0.0.1 only.
function M.control()
  local d = ngx.shared[cfg.dict]
  local what = ngx.var.uri:match("([^/]+)$")
  if what == "start" then
    local secs = tonumber(ngx.var.arg_seconds or "60")
    if not secs or secs <= 0 or secs > cfg.max_seconds then
      ngx.status = 400
      ngx.say("seconds must be a number in (0, ", cfg.max_seconds, "]")
      return
    end
    local gen = d:incr("gen", 1, 0)
    d:set("until", ngx.now() + secs)
    ngx.say("recording ", gen, " for ", secs, " s: ", cfg.dir, "/ondemand-", gen,
            "-<pid>", cfg.suffix, " from each worker within ", cfg.poll, " s")
  elseif what == "stop" then
    d:set("until", 0)
    ngx.say("stopping within ", cfg.poll, " s")
  elseif what == "status" then
    local gen, limit = d:get("gen"), d:get("until") or 0
    local left = limit - ngx.now()
    if gen and left > 0 then
      ngx.say("recording ", gen, ", ", string.format("%.1f", left), " s left")
    else
      ngx.say("not recording")
    end
  else
    ngx.status = 404
    ngx.say("use /ljm/start?seconds=N, /ljm/stop or /ljm/status")
  end
end

-- Go's /debug/pprof/heap and /debug/pprof/allocs (content_by_lua*):
-- ljm_pprof.lua.
function M.pprof()
  if not cfg.dir then configure() end
  return require("ljm_pprof").serve(cfg)
end

return M
