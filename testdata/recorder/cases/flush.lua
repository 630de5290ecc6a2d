-- flush.lua OUT INTERVAL [kill]: records to OUT with a flush interval
-- (INTERVAL "none": without; "-": OUT is ljm record's whole-run file, not
-- started here), allocates a little (far less than a buffer), waits past the
-- interval, allocates once more, and prints OUT's size while still
-- recording; then stops, or with "kill" kills itself with SIGKILL.
jit.off()
local ffi = require("ffi")
ffi.cdef [[
int getpid(void);
int kill(int pid, int sig);
int poll(void *fds, unsigned long nfds, int timeout);
]]
local rec = require("ljm.recorder")
local out, interval, how = arg[1], arg[2], arg[3]
if interval ~= "-" then
  assert(rec.start(out, interval ~= "none" and { flush = tonumber(interval) } or nil))
end
local keep = {}
for i = 1, 1000 do keep[i] = { i } end
ffi.C.poll(nil, 0, 300)  -- sleep 0.3 s
keep[#keep + 1] = {}       -- the first event after the interval
ffi.C.poll(nil, 0, 100)  -- let the writer thread write it
local f = assert(io.open(out, "rb"))
print(f:seek("end"))
f:close()
if how == "kill" then
  io.stdout:flush()
  ffi.C.kill(ffi.C.getpid(), 9)
end
if interval ~= "-" then assert(rec.stop()) end
