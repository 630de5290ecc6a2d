-- ljm/check.lua -- leak and memory checks for Lua tests (doc/check.md).
--
--   local check = require "ljm.check"
--   assert(check.no_leak(function() handle(request) end))
--   assert(check.limit_memory("24MB", build_index, words))
--
-- Both return true, or false and a report naming the lines and call stacks
-- that hold the memory; check.last_report() is the same as a table. They
-- leave the collector as they found it (stopped or running) and no
-- recording behind, also when the function errors: the error is raised
-- again with the function's traceback.

local rec = require("ljm.recorder")
local core = require("ljm.check_core")

local M = {}
local last

local floor = math.floor
local fmt = string.format

-- Bytes from 123, "123", "512k", "24MB", "1.5 GiB" (k/m/g powers of 1024).
local UNITS = { [""] = 1, b = 1, k = 1024, m = 1024 ^ 2, g = 1024 ^ 3 }
local function parse_size(v, who, what)
  if type(v) == "number" and v >= 0 and v < 2 ^ 53 then return v end
  if type(v) == "string" then
    local num, unit = v:lower():match("^%s*([%d.]+)%s*([kmg]?)i?b?%s*$")
    local n = tonumber(num)
    if n and UNITS[unit] then return floor(n * UNITS[unit]) end
  end
  error(fmt("ljm.check.%s: %s must be bytes (a number, or a string like '512k' or '24MB'), not %s",
            who, what, type(v) == "string" and fmt("%q", v) or tostring(v)), 3)
end
M.parse_size = parse_size

local function human(n)
  if n >= 1024 ^ 2 then return fmt("%.1f MiB", n / 1024 ^ 2) end
  if n >= 1024 then return fmt("%.1f KiB", n / 1024) end
  return fmt("%d B", floor(n + 0.5))
end

-- The collector's state, put back as found: a full collection restarts a
-- stopped collector.
local function gc_state()
  local ok, running = pcall(collectgarbage, "isrunning")
  return ok and running ~= false
end
local function gc_restore(running)
  if not running then collectgarbage("stop") end
end

-- A fresh path for the recording: a sibling of os.tmpname()'s new file,
-- which the recorder creates (it never replaces a file it did not create).
local function new_paths()
  local base = os.tmpname()
  return base, base .. ".ljm"
end
local function remove(base, path)
  os.remove(path)
  os.remove(base)
end

-- Starts an exact recording with stacks; true, or false and why not.
local function start(path)
  local ok, err = rec.start(path, { stacks = true })
  if ok then return true end
  return false, err
end

-- Theil-Sen: the median of the slopes between every two points of y[a..b]
-- (at most 101 of them, evenly spaced: the pairs grow with their square).
local function slope(y, a, b)
  local idx, step = {}, math.max(1, (b - a) / 100)
  for x = a, b + 0.5, step do idx[#idx + 1] = floor(x + 0.5) end
  local s = {}
  for i = 1, #idx - 1 do
    for j = i + 1, #idx do
      local p, q = idx[i], idx[j]
      if q > p then s[#s + 1] = (y[q] - y[p]) / (q - p) end
    end
  end
  table.sort(s)
  local n = #s
  if n == 0 then return 0 end
  if n % 2 == 1 then return s[(n + 1) / 2] end
  return (s[n / 2] + s[n / 2 + 1]) / 2
end
M.slope = slope

-- In how many of k equal stretches of y[a..b] the heap grew, and whether
-- the last one did.
local function stretches_growing(y, a, b, k)
  local len = floor((b - a + 1) / k)
  local grew, last = 0, false
  for i = 0, k - 1 do
    local from = b - (k - i) * len  -- the point before the stretch
    last = y[from + len] > y[from]
    if last then grew = grew + 1 end
  end
  return grew, last
end

-- fn's error with its traceback; an error object that is not a string
-- or a number goes on as it is (a traceback would replace it).
local function traceback(e)
  if type(e) ~= "string" and type(e) ~= "number" then return e end
  return debug.traceback(tostring(e), 2)
end

-- This file's name as the recording's frames carry it: the frames from the
-- first of ours outwards are the check's own, not the program's.
local ME = debug.getinfo(1, "S").source:gsub("^@", "")

-- The program's frames of a stack, innermost first.
local function program_frames(s)
  local out = {}
  for k = #s.frames, 1, -1 do
    if s.files[k] == ME then
      while out[#out] == "pcall/xpcall" do out[#out] = nil end  -- ours: how we called fn
      break
    end
    out[#out + 1] = s.frames[k]
  end
  return out
end

-- Lines and stacks of an analysis, as report text; per: calls they came from.
local MAX_FRAMES = 24
local function held(lines, a, per)
  for _, l in ipairs(a.lines or {}) do
    lines[#lines + 1] = fmt("  %10s in %6d blocks%s  %s%s", human(l.bytes), l.blocks,
                            per and fmt(" (%s, %.1f blocks a call)", human(l.bytes / per),
                                        l.blocks / per) or "",
                            l.name, l.func ~= "" and l.func ~= l.name and fmt(" (%s)", l.func) or "")
  end
  local shown = 0
  for _, s in ipairs(a.stacks or {}) do
    s.frames = program_frames(s)
    s.files = nil
    if #s.frames > 0 then  -- not the check's own (a collection's work)
      shown = shown + 1
      lines[#lines + 1] = fmt("  stack %d: %s in %d blocks", shown, human(s.bytes), s.blocks)
      for k, f in ipairs(s.frames) do
        if k > MAX_FRAMES then
          lines[#lines + 1] = fmt("    ... %d frames more", #s.frames - MAX_FRAMES)
          break
        end
        lines[#lines + 1] = "    " .. f
      end
    end
  end
end

-- core.analyze of a recording: the analysis, or nil and why there is none
-- (also when it raises: the caller still removes the files).
local function analyze(path, what, rows)
  local ok, a, err = pcall(core.analyze, path, what, rows, ME)
  if ok then return a, err end
  return nil, a
end

-- The recorded pass that names what leaks: k more calls of fn recorded
-- exactly with stacks, the JIT off (traces are flushed, and compiled code
-- has no lines or stacks to name), and what they left alive at the end.
-- collect: no_leak's full collection. Returns the analysis, or nil and why
-- there is none; raises fn's error.
local function explain(fn, k, rows, collect)
  local base, path = new_paths()
  local jit_on = jit and jit.status()
  if jit_on then
    jit.flush()
    jit.off()
  end
  local recording, why = start(path)
  local ok, err = true, nil
  if recording then
    ok, err = xpcall(function()
      for _ = 1, k do
        fn()
        collect()
      end
    end, traceback)
    collect()
    local stopped, serr = rec.stop()
    if not stopped then recording, why = false, serr end
  end
  if jit_on then jit.on() end
  local a, aerr
  if ok and recording then a, aerr = analyze(path, "inuse", rows) end
  remove(base, path)
  if not ok then error(err, 0) end
  if not recording then return nil, why end
  return a, aerr
end

-- no_leak(fn [, opts]): runs fn opts.warmups times (3), then
-- opts.iterations times (100) with a full collection after each, and fails
-- when the heap left after the iterations keeps growing by more than
-- opts.limit bytes an iteration (0) by every measure (doc/check.md): the
-- Theil-Sen slopes of the second half and the last quarter and the mean
-- (noise does not move them), growth in four of the second half's five
-- stretches, the last among them (growth that happens once or a few times
-- does not pass), and the last quarter's lowest above the first half's
-- highest (a batch that fills and empties goes back down); and when
-- opts.explain more calls (25), recorded, leave more than the limit alive
-- (growth that was the VM's own, traces compiled, does not). The report
-- names what those calls left alive.
local OPTIONS = { iterations = true, warmups = true, limit = true, explain = true, rows = true }

-- A whole number in lo..hi (opts of no_leak), or a usage error.
local function whole(v, name, lo, hi)
  if type(v) ~= "number" or v ~= floor(v) or v < lo or v > hi then
    error(fmt("ljm.check.no_leak: %s must be a whole number from %d to %d, not %s", name, lo, hi,
              type(v) == "string" and fmt("%q", v) or tostring(v)), 3)
  end
  return v
end

function M.no_leak(fn, opts)
  if type(fn) ~= "function" then
    error("ljm.check.no_leak: fn must be a function, not " .. type(fn), 2)
  end
  opts = opts or {}
  if type(opts) ~= "table" then error("ljm.check.no_leak: opts must be a table", 2) end
  for key in pairs(opts) do
    if not OPTIONS[key] then
      error(fmt("ljm.check.no_leak: unknown option %s (iterations, warmups, limit, explain, rows)",
                tostring(key)), 2)
    end
  end
  local n = whole(opts.iterations or 100, "iterations", 10, 1000000)
  local warmups = whole(opts.warmups or 3, "warmups", 0, 1000000)
  local k = whole(opts.explain or 25, "explain", 1, 1000000)
  local rows = whole(opts.rows or 5, "rows", 0, 1000)
  local limit = parse_size(opts.limit or 0, "no_leak", "limit")
  local running = gc_state()
  -- A full collection restarts a stopped collector: fn runs as it found it.
  local function collect()
    collectgarbage()
    if not running then collectgarbage("stop") end
  end
  local live = {}
  for i = 1, n do live[i] = 0 end  -- no table growth inside the loop
  local function measure()
    for _ = 1, warmups do fn() end
    collect()
    collect()
    for i = 1, n do
      fn()
      collect()
      live[i] = collectgarbage("count") * 1024
    end
  end
  -- This loop is never compiled: a trace of it, made halfway through,
  -- would raise the heap as a leak does (fn's own code compiles as ever).
  if jit then jit.off(measure) end
  local ok, err = xpcall(measure, traceback)
  local half = floor(n / 2)
  local quarter = n - floor(n / 4) + 1
  local per, tail, mean, high, low, grew, last_grew = 0, 0, 0, 0, math.huge, 0, false
  if ok then
    per = slope(live, half + 1, n)
    tail = slope(live, quarter, n)
    mean = (live[n] - live[half]) / (n - half)
    for i = 1, half do high = math.max(high, live[i]) end
    for i = quarter, n do low = math.min(low, live[i]) end
    grew, last_grew = stretches_growing(live, half + 1, n, 5)
  end
  -- Growth by every measure: the rates, in most stretches to the end, and
  -- the last quarter's lowest above the first half's highest (a batch that
  -- fills and empties goes back down).
  local leaked = per > limit and tail > limit and mean > limit and grew >= 4 and last_grew
                 and low - high > limit * (n - half) / 4
  local a, why, unconfirmed = {}, nil, false
  if ok and leaked then
    local got
    ok, got = pcall(function() return { explain(fn, k, rows, collect) } end)
    if ok then a, why = got[1] or {}, got[2] else err = got end
    -- The recorded calls left nothing alive: the growth is the VM's own
    -- (traces compiled, with the JIT on), not fn's.
    if ok and a.events and not (a.program_bytes > 0 and a.program_bytes / k > limit) then
      leaked, unconfirmed = false, true
    end
  end
  gc_restore(running)
  if not ok then error(err, 0) end
  last = {
    leaked = leaked, bytes_per_iteration = mean, slope = per, last_quarter = tail, limit = limit,
    segments_grown = grew, unconfirmed = unconfirmed or nil,
    iterations = n, warmups = warmups, recorded = a.events and k or 0,
    blocks_per_iteration = a.program_blocks and a.program_blocks / k or nil,
    held_bytes = a.program_bytes, held_blocks = a.program_blocks,
    lines = a.lines or {}, stacks = a.stacks or {}, heap = live, note = why,
  }
  if not leaked then return true end
  local lines = {
    fmt("ljm.check.no_leak: the heap grows by %s an iteration over the last %d of %d iterations, "
        .. "in %d of their 5 stretches (limit %s)", human(mean), n - half, n, grew, human(limit)),
  }
  if a.events then
    lines[#lines + 1] = fmt("held after %d more calls, recorded with the JIT off: %s in %d blocks, "
                            .. "%.1f blocks a call", k, human(a.program_bytes), a.program_blocks,
                            a.program_blocks / k)
    held(lines, a, k)
  else
    lines[#lines + 1] = "no lines or stacks: " .. tostring(why)
  end
  last.text = table.concat(lines, "\n")
  return false, last.text
end

-- limit_memory(limit, fn, ...): fails when the Lua heap, while fn(...)
-- runs, goes more than limit bytes above what was alive before it.
function M.limit_memory(limit, fn, ...)
  limit = parse_size(limit, "limit_memory", "limit")
  if type(fn) ~= "function" then
    error("ljm.check.limit_memory: fn must be a function, not " .. type(fn), 2)
  end
  local running = gc_state()
  local base, path = new_paths()
  collectgarbage()
  collectgarbage()
  gc_restore(running)  -- fn runs with the collector as it found it
  local started, why = start(path)
  if not started then
    remove(base, path)
    error("ljm.check.limit_memory: cannot record: " .. tostring(why), 2)
  end
  local ok, err = xpcall(fn, traceback, ...)
  local stopped, serr = rec.stop()
  gc_restore(running)
  if not ok then
    remove(base, path)
    error(err, 0)
  end
  local a, aerr
  if stopped then a, aerr = analyze(path, "peak", 5) end
  remove(base, path)
  if not stopped then error("ljm.check.limit_memory: " .. tostring(serr), 2) end
  if not a then error("ljm.check.limit_memory: " .. tostring(aerr), 2) end
  last = {
    peak = a.heap_peak, limit = limit, over = a.heap_peak > limit,
    lines = a.lines, stacks = a.stacks, held_bytes = a.program_bytes, held_blocks = a.program_blocks,
  }
  if a.heap_peak <= limit then return true end
  local lines = {
    fmt("ljm.check.limit_memory: the heap peaked %s above where it started (limit %s)",
        human(a.heap_peak), human(limit)),
    fmt("held at the peak: %s in %d blocks", human(a.program_bytes), a.program_blocks),
  }
  held(lines, a, nil)
  last.text = table.concat(lines, "\n")
  return false, last.text
end

-- The last check's findings as a table (nil before the first).
function M.last_report()
  return last
end

return M
