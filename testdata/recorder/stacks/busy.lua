-- busy.lua [SECONDS [probe]]: allocates for SECONDS (default 1) with the JIT
-- off, for time marks and RSS samples (ljmread.check_busy). Prints the
-- iterations, the process's threads halfway through and, with "probe",
-- what pthread_create returns (0, or an errno: a host without threads).
jit.off()
local secs = tonumber(arg and arg[1]) or 1.0
local keep, i, t0, threads = {}, 0, os.clock(), nil
while os.clock() - t0 < secs do
  i = i + 1
  keep[i % 50000] = {i, tostring(i)}
  if not threads and os.clock() - t0 > secs / 2 then
    threads = io.open("/proc/self/status"):read("*a"):match("Threads:%s*(%d+)")
  end
end
local made = ""
if arg and arg[2] == "probe" then
  local ffi = require("ffi")
  ffi.cdef[[typedef struct { char b[64]; } ljm_attr_t;
int pthread_create(unsigned long *th, const ljm_attr_t *a, void *(*fn)(void *), void *arg);]]
  local th = ffi.new("unsigned long[1]")
  local cb = ffi.cast("void *(*)(void *)", function() return nil end)
  made = ffi.C.pthread_create(th, nil, cb, nil)
end
print(i, threads, made)
