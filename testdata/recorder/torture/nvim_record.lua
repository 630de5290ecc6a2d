-- nvim_record.lua -- Neovim's runtime Lua recorded with call stacks from
-- inside nvim (nvim --headless -u NONE -c "luafile nvim_record.lua"):
-- LSP and treesitter modules, vim.inspect, vim.split of a large string,
-- 20000 buffer lines, and JIT-heavy loops in chunks of their own.
-- LJM_OUT: the stream; LJM_DONE: a file that gets "ok" and the figures;
-- LJM_SAMPLE, LJM_SEED: a sampled recording at that rate instead.
local out, done = os.getenv("LJM_OUT"), os.getenv("LJM_DONE")
local sample, seed = os.getenv("LJM_SAMPLE"), tonumber(os.getenv("LJM_SEED"))
local rec = require "ljm.recorder"
assert(rec.start(out, {stacks = true, sample = sample, seed = sample and seed or nil}))
require "vim.lsp"
require "vim.treesitter"
local caps = vim.lsp.protocol.make_client_capabilities()
local text = vim.inspect(caps)
local parts = vim.split(string.rep("alpha,beta,gamma\n", 20000), "\n", {plain = true})
local lines = {}
for i = 1, 20000 do lines[i] = ("line %d %s"):format(i, parts[i] or "") end
vim.fn.setline(1, lines)
local got = vim.api.nvim_buf_get_lines(0, 0, -1, false)
local words = 0
for _, l in ipairs(got) do
  for w in l:gmatch("%a+") do words = words + #w end
end
local merged = vim.tbl_deep_extend("force", caps, {extra = {a = 1}})
local sink = {}
for i = 1, 200 do
  local f = load("local t = {} for j = 1, 200 do t[j] = {j, '" .. i .. "'} end return t")
  sink[i % 50 + 1] = f()
end
collectgarbage()
local ok, err = rec.stop()
local f = assert(io.open(done, "w"))
f:write(("%s %s %d %d %d %s\n"):format(ok and "ok" or "FAILED", tostring(err), #text, #got,
                                        words, type(merged)))
f:close()
