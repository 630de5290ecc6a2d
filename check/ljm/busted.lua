-- ljm/busted.lua -- ljm.check's checks as busted assertions (doc/check.md):
--
--   require "ljm.busted"   -- in a spec, or a helper named in .busted
--   assert.no_leak(fn [, opts])
--   assert.memory_below(limit, fn [, ...])
--
-- A failure's message is ljm.check's report: the lines and call stacks
-- that hold the memory. With `is_not` they pass when the check fails.

local check = require("ljm.check")
local luassert = require("luassert")
local say = require("say")

-- The whole message is the report (or why the check passed), unformatted.
say:set("assertion.ljm_check.positive", "%s")
say:set("assertion.ljm_check.negative", "%s")

local function with_report(arguments, ok, report, passed)
  arguments.n = 1
  arguments[1] = ok and passed or report
  arguments.nofmt = { true }
  return ok
end

local function no_leak(_, arguments)
  local ok, report = check.no_leak(arguments[1], arguments[2])
  local r = check.last_report()
  return with_report(arguments, ok, report, string.format(
    "ljm.check.no_leak: no leak (the heap grew by %.0f bytes an iteration over the second half, "
    .. "in %d of its 5 stretches; limit %d)", r.bytes_per_iteration, r.segments_grown, r.limit))
end

local function memory_below(_, arguments)
  local n = arguments.n or #arguments
  local ok, report = check.limit_memory(arguments[1], arguments[2], unpack(arguments, 3, n))
  local r = check.last_report()
  return with_report(arguments, ok, report, string.format(
    "ljm.check.limit_memory: the heap peaked %d bytes above its start, limit %d", r.peak, r.limit))
end

luassert:register("assertion", "no_leak", no_leak,
                  "assertion.ljm_check.positive", "assertion.ljm_check.negative")
luassert:register("assertion", "memory_below", memory_below,
                  "assertion.ljm_check.positive", "assertion.ljm_check.negative")

return check
