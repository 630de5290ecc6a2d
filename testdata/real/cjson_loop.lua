-- cjson_loop.lua: Debian's lua-cjson encoding and decoding a document; the
-- module is required after the recording starts (ljm record runs this file).
local cjson = require "cjson"
local keep = {}
local doc = {name = "x", list = {1, 2, 3, {a = "b"}}, s = ("y"):rep(100)}
for i = 1, tonumber(arg[1] or 20000) do
  local s = cjson.encode(doc)
  keep[i % 100 + 1] = cjson.decode(s)
end
