-- luacheck_run.lua: Debian's luacheck (lua-check) linting a directory of Lua files
-- in-process (default: penlight's sources), so that ljm record sees every function.
local luacheck = require "luacheck"
local files = {}
local p = io.popen("find " .. (arg[1] or "/usr/share/lua/5.1/pl") .. " -name '*.lua' | sort")
for f in p:lines() do files[#files + 1] = f end
p:close()
local report = luacheck.check_files(files)
print(#files, report.warnings, report.errors)
