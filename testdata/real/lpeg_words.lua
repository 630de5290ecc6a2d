-- lpeg_words.lua: Debian's lua-lpeg splitting a text into words; the module
-- is required after the recording starts (ljm record runs this file).
local lpeg = require "lpeg"
local word = lpeg.C(lpeg.R("az") ^ 1)
local words = lpeg.Ct((word * lpeg.P(" ") ^ 0) ^ 0)
local text = ("hello world abc "):rep(tonumber(arg[1] or 20000))
print(#words:match(text))
