-- sessmod.lua: a module with a cache (package.loaded.sessmod.cache).
local M = {}
M.cache = {}
function M.put(k, v) M.cache[k] = v end
return M
