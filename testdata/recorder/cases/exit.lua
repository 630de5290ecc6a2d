-- os.exit() while the whole-run and a misc.memprof recording are running.
jit.off()
assert(misc.memprof.start(arg[1]))
local t = {}
for i = 1, 1000 do t[i] = {i} end  -- line 5
os.exit(3)
