-- app.lua -- a Tarantool application recording itself: box (memtx) and Lua
-- allocations at known lines. arg: WORK_DIR STREAM [stacks]
local work, stream, mode = arg[1], arg[2], arg[3]
local rec = require("ljm.recorder")
jit.off()
box.cfg{work_dir = work, log = work .. "/tarantool.log", memtx_memory = 64 * 1024 * 1024}
local s = box.schema.space.create("kv", {if_not_exists = true})
s:create_index("pk", {if_not_exists = true})
print("build", rec.build())
assert(rec.start(stream, {stacks = mode == "stacks"}))
local keep = {}
for i = 1, 5000 do
  keep[i] = {i}                                    -- line 13: 5000 tables
  s:replace{i, string.format("value-%d", i)}       -- line 14: box and strings
end
assert(rec.stop())
os.exit(0)
