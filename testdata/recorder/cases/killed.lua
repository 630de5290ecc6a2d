-- killed.lua: allocates well past the recorder's 8 MiB buffer, then the
-- process kills itself with SIGKILL (no exit handlers, no stop).
jit.off()
local ffi = require("ffi")
ffi.cdef [[
int getpid(void);
int kill(int pid, int sig);
]]
local keep = {}
for i = 1, 1000000 do
  keep[#keep + 1] = { i, tostring(i) }
  if i % 3 ~= 0 then keep[#keep] = nil end
end
io.stdout:write("killing\n")
io.stdout:flush()
ffi.C.kill(ffi.C.getpid(), 9)
