-- paused_own.lua -- a script that sets SIGUSR1 to be ignored itself, under
-- ljm record --paused (recorder/tests/paused_test.py): ljm record says its
-- handler is gone.
local ffi = require("ffi")
ffi.cdef("typedef void (*sighandler_t)(int); sighandler_t signal(int sig, sighandler_t h);")
ffi.C.signal(10, ffi.cast("sighandler_t", 1))  -- SIGUSR1, SIG_IGN
print("ignored")
