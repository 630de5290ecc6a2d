-- check_cases.lua CASE [RUNS] -- what check_test.py asks of ljm.check, one
-- case per run of the VM. Prints "CASE: ok" (and findings) or fails with
-- an error naming what went wrong.
local check = require("ljm.check")
local rec = require("ljm.recorder")

local case, runs = arg[1], tonumber(arg[2] or "3")

-- Every temporary name ljm.check takes, to see that it leaves none behind.
local made, real_tmpname = {}, os.tmpname
os.tmpname = function()
  local n = real_tmpname()
  made[#made + 1] = n
  return n
end
local function nothing_left()
  for _, n in ipairs(made) do
    for _, f in ipairs({ n, n .. ".ljm" }) do
      local h = io.open(f)
      if h then
        h:close()
        error("left behind: " .. f)
      end
    end
  end
  print(string.format("%s: %d temporary names, no files left behind", case, #made))
end

local function expect(cond, what, ...)
  if not cond then error(string.format(what, ...), 2) end
end

-- The leak the issue names: 64 bytes or so a call, a table entry kept in
-- an upvalue.
local kept = {}
local function remember(v)
  kept[#kept + 1] = { v }
end
local keep = remember
local function handle_request(i)
  remember(i)
end

-- Clean workloads (workloads.lua, beside this file).
local here = arg[0]:match("^(.*)/") or "."
local workloads = dofile(here .. "/workloads.lua")

local function run_clean(name, fn)
  local failed = 0
  for _ = 1, runs do
    local ok, report = check.no_leak(fn)
    if not ok then
      failed = failed + 1
      io.write(name, ": false positive:\n", report, "\n")
    end
  end
  print(string.format("clean %s: %d of %d runs passed", name, runs - failed, runs))
  return failed
end

if case == "leak" then
  local ok, report = check.no_leak(function() handle_request(1) end)
  expect(ok == false, "no_leak missed the leak")
  local r = check.last_report()
  print(report)
  expect(r.leaked and r.bytes_per_iteration >= 32 and r.bytes_per_iteration <= 256,
         "bytes an iteration: %s", tostring(r.bytes_per_iteration))
  print(string.format("leak: %.1f bytes, %.2f blocks an iteration", r.bytes_per_iteration,
                      r.blocks_per_iteration))
  print("leak: ok")
elseif case == "leak_patterns" then
  -- Leaks that come every few calls are leaks too: every 2nd call, and a
  -- bigger one every 5th.
  local store, calls = {}, 0
  local patterns = {
    every_2nd = function() calls = calls + 1 if calls % 2 == 0 then store[#store + 1] = { calls } end end,
    every_5th = function() calls = calls + 1 if calls % 5 == 0 then store[#store + 1] = ("x"):rep(1000 + calls) end end,
  }
  for name, fn in pairs(patterns) do
    local ok = check.no_leak(fn)
    local r = check.last_report()
    expect(ok == false, "%s: missed (%.1f bytes an iteration, %d segments grew)", name,
           r.bytes_per_iteration, r.segments_grown)
    print(string.format("leak_patterns %s: caught, %.1f bytes an iteration", name, r.bytes_per_iteration))
  end
  print("leak_patterns: ok")
elseif case == "leak_limit" then
  -- The same leak within a limit of 1k an iteration passes.
  expect(check.no_leak(function() handle_request(1) end, { limit = "1k" }), "limit 1k failed")
  print("leak_limit: ok")
elseif case == "clean" then
  local failed = 0
  for _, mode in ipairs({ "on", "off" }) do
    if jit then jit[mode]() end
    local names = {}
    for name in pairs(workloads) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do failed = failed + run_clean("jit " .. mode .. " " .. name, workloads[name]) end
  end
  print(string.format("clean: %d false positives", failed))
  print(failed == 0 and "clean: ok" or "clean: FAILED")
elseif case == "limit" then
  -- A function whose peak is about 256 KiB: 2x a limit of 128 KiB fails,
  -- 0.5x a limit of 512 KiB passes.
  local function peak256k()
    local t = {}
    for i = 1, 256 do t[i] = string.rep("x", 1000 + i) end
    return #t
  end
  local ok, report = check.limit_memory("128k", peak256k)
  expect(ok == false, "limit_memory at half the peak passed")
  print(report)
  local r = check.last_report()
  expect(r.peak >= 256 * 1024 and r.peak < 400 * 1024, "peak %s", tostring(r.peak))
  expect(check.limit_memory("512k", peak256k), "limit_memory at twice the peak failed")
  expect(check.limit_memory(512 * 1024, function(a, b) assert(a == 1 and b == 2, "arguments") end,
                            1, 2), "arguments passed")
  print("limit: ok")
elseif case == "errors" then
  local function usage(f, want)
    local ok, err = pcall(f)
    expect(not ok and tostring(err):find(want, 1, true), "usage error %q: %s", want, tostring(err))
  end
  usage(function() check.no_leak(42) end, "fn must be a function, not number")
  usage(function() check.no_leak(function() end, { iterations = 9 }) end, "from 10 to 1000000, not 9")
  usage(function() check.no_leak(function() end, { iterations = math.huge }) end, "iterations must be")
  usage(function() check.no_leak(function() end, { rows = "all" }) end, 'rows must be a whole number from 0 to 1000, not "all"')
  usage(function() check.limit_memory("lots", function() end) end, "must be bytes")
  usage(function() check.no_leak(function() end, { iteration = 10 }) end, "unknown option iteration")
  -- An error inside fn comes back with its traceback; nothing keeps
  -- recording and a stopped collector stays stopped.
  local function boom() error("boom in the test") end
  local calls = 0
  local function boom_later()  -- leaks, then fails in the recorded calls that name the leak
    calls = calls + 1
    keep(calls)
    if calls == 110 then boom() end
  end
  local jit_was = jit and jit.status()
  collectgarbage("stop")
  local ok, err = pcall(check.no_leak, boom_later)
  expect(calls == 110, "the error came in the recorded calls: %d calls", calls)
  expect(not ok and err:find("boom in the test", 1, true) and err:find("stack traceback", 1, true)
         and err:find("boom", 1, true), "no_leak's error: %s", tostring(err))
  expect(not rec.is_running(), "a recording left running after no_leak's error")
  expect(collectgarbage("isrunning") == false, "no_leak restarted a stopped collector")
  expect(not jit or jit.status() == jit_was, "no_leak left the JIT %s", jit and tostring(jit.status()))
  -- An error object that is not a string comes back as it is.
  local obj = { code = 42 }
  ok, err = pcall(check.no_leak, function() error(obj) end)
  expect(not ok and err == obj, "the error object: %s", tostring(err))
  ok, err = pcall(check.limit_memory, "1MB", boom)
  expect(not ok and err:find("boom in the test", 1, true) and err:find("stack traceback", 1, true),
         "limit_memory's error: %s", tostring(err))
  expect(not rec.is_running(), "a recording left running after limit_memory's error")
  expect(collectgarbage("isrunning") == false, "limit_memory restarted a stopped collector")
  collectgarbage("restart")
  expect(check.no_leak(function() end) and collectgarbage("isrunning") == true,
         "a running collector stays running")
  print("errors: ok")
elseif case == "busy" then
  -- The user's own recording: no_leak measures beside it (no stacks),
  -- limit_memory refuses in one line, and the user's stream is untouched.
  local out = assert(arg[3], "busy needs the user's stream path")
  assert(rec.start(out))
  local ok, report = check.no_leak(function() handle_request(2) end)
  expect(ok == false and report:find("no lines or stacks", 1, true), "no_leak beside: %s",
         tostring(report))
  local lok, lerr = pcall(check.limit_memory, "1MB", function() end)
  expect(not lok and lerr:find("cannot record", 1, true) and not lerr:find("\n"),
         "limit_memory beside: %s", tostring(lerr))
  expect(rec.is_running(), "the user's recording stopped")
  assert(rec.stop())
  print("busy: ok")
else
  error("unknown case " .. tostring(case))
end
nothing_left()
