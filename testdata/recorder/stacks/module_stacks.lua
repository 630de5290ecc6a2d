-- module_stacks.lua DIR: start(path, options) of require "ljm.recorder".
local dir = assert(arg[1], "usage: luajit module_stacks.lua DIR")
local rec = require("ljm.recorder")
jit.off()
local failed = false
local function check(cond, what)
  if not cond then
    io.stderr:write("FAIL ", what, "\n")
    failed = true
  end
end
local function misuse(opts, msg)
  local ok, m, code = rec.start(dir .. "/misuse.ljm", opts)
  check(ok == nil and m == msg and code == 22,
        "misuse " .. msg .. ": got " .. tostring(m) .. " " .. tostring(code))
end
misuse({foo = 1}, "unknown option 'foo'")
misuse({[1] = true}, "unknown option (a number key)")
misuse({stacks = 1}, "option 'stacks' must be a boolean")
misuse({stacks = true, depth = 0}, "option 'depth' must be an integer 1..65535")
misuse({stacks = true, depth = 2.5}, "option 'depth' must be an integer 1..65535")
misuse({stacks = true, depth = "8"}, "option 'depth' must be an integer 1..65535")
misuse({stacks = true, depth = 65536}, "option 'depth' must be an integer 1..65535")
misuse({depth = 8}, "option 'depth' needs stacks = true")
misuse("stacks", "options must be a table")
check(io.open(dir .. "/misuse.ljm") == nil, "misuse creates no file")
check(rec.is_running() == false, "not running after misuse")

local function f(n) return {n} end                  -- 29
check(rec.start(dir .. "/mod_stacks.ljm", {stacks = true, depth = 8}) == true, "start with stacks")
for i = 1, 100 do f(i) end                          -- 31
check(rec.stop() == true, "stop")
check(rec.start(dir .. "/mod_plain.ljm", {stacks = false}) == true, "start with stacks = false")
for i = 1, 100 do f(i) end                          -- 34
check(rec.stop() == true, "stop plain")
check(rec.start(dir .. "/mod_nil.ljm", nil) == true, "start with nil options")
check(rec.stop() == true, "stop nil")
print(failed and "module_stacks: FAILED" or "module_stacks: ok")
os.exit(failed and 1 or 0)
