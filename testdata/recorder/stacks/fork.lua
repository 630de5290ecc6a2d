-- fork.lua: fork() while an extended recording runs; the child allocates
-- and exits, the parent goes on recording.
local ffi = require("ffi")
ffi.cdef[[
int fork(void);
int waitpid(int pid, int *status, int options);
void _exit(int status);
]]
jit.off()
local keep = {}
for i = 1, 1000 do keep[i] = {i} end                -- 11
local pid = ffi.C.fork()
if pid == 0 then
  for i = 1, 100000 do keep[i % 100] = {i} end      -- 14: child
  os.exit(0)                                        -- exit() runs atexit
end
local st = ffi.new("int[1]")
ffi.C.waitpid(pid, st, 0)
for i = 1, 1000 do keep[i] = {i, i} end             -- 19
print("parent done", st[0])
