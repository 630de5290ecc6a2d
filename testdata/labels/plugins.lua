-- plugins.lua: three "plugins" run under labels (ljm record --time).
-- Plugin a keeps 1000 tables, b makes 1000 it drops, c's coroutine keeps
-- 500 (it inherits c from its creator); an LRU of request ids folds past
-- the recorder's 4095 label sets when given arg[1] == "many".
local rec = misc.memprof
local keep = {}
local function plugin_a(n) for i = 1, n do keep[#keep + 1] = {i, i} end end   -- line 7
local function plugin_b(n) local t = {} for i = 1, n do t[i] = {i} end end     -- line 8
local function check(cond, what) if not cond then error(what, 2) end end

local t0 = {}
for i = 1, 100 do t0[i] = i end  -- the keep array grows before any label: none
check(rec.label("plugin", "a") == true, "label a")
local l = rec.labels()
check(l.plugin == "a" and next(l, "plugin") == nil, "labels() is {plugin = a}")
plugin_a(1000)
check(rec.label("plugin", nil) == true, "label removed")
check(next(rec.labels()) == nil, "no labels")
check(rec.with_labels({plugin = "b"}, function(n) plugin_b(n) return n + 1 end, 1000) == 1001,
      "with_labels returns fn's results")
check(next(rec.labels()) == nil, "with_labels restored nothing")
rec.label("plugin", "c")
local co = coroutine.create(function()
  check(rec.labels().plugin == "c", "the coroutine inherits c")
  coroutine.yield()
  for i = 1, 500 do keep[#keep + 1] = {i} end                                 -- line 25
end)
rec.label("plugin", nil)
coroutine.resume(co)
check(coroutine.resume(co), "c's coroutine ran")
-- with_labels around an error restores the previous labels; yields inside
rec.label("route", "/x")
local ok, err = pcall(rec.with_labels, {route = "/y", plugin = "d"}, function()
  check(rec.labels().route == "/y", "route /y inside")
  error("boom")
end)
check(not ok and tostring(err):find("boom"), "the error goes on: " .. tostring(err))
local after = rec.labels()
check(after.route == "/x" and after.plugin == nil, "labels restored after the error")
local w = coroutine.wrap(function()
  return rec.with_labels({plugin = "e"}, function() local t = {1} coroutine.yield(1) return #t + 1 end)
end)
check(w() == 1 and w() == 2, "fn yields inside with_labels")
rec.label("route", nil)
-- misuse: clear errors
check(not pcall(rec.label, 1, "x"), "a number key is an error")
check(not pcall(rec.label, "k", {}), "a table value is an error")
check(not pcall(rec.label, "", "x"), "an empty key is an error")
for i = 1, 16 do rec.label("k" .. i, "v") end
check(not pcall(rec.label, "k17", "v"), "a 17th label is an error")
for i = 1, 16 do rec.label("k" .. i, nil) end
rec.label(("k"):rep(100), ("v"):rep(300))
local long = next(rec.labels())
check(#long == 63 and #rec.labels()[long] == 127, "key and value cut to 63 and 127 bytes")
rec.label(long, nil)
-- with_labels leaves the labels as they were: after a 17th label, an empty
-- key, a key longer than 63 bytes, labels fn set itself
local function dump()
  local t = {}
  for k, v in pairs(rec.labels()) do t[#t + 1] = k .. "=" .. v end
  table.sort(t)
  return table.concat(t, ",")
end
for i = 1, 15 do rec.label("k" .. string.char(96 + i), "v") end
local before = dump()
check(not pcall(rec.with_labels, {aa = "1", zz = "2"}, print), "a 17th label in t is an error")
check(dump() == before, "labels as before after a 17th: " .. dump())
check(not pcall(rec.with_labels, {a = "1", [""] = "2"}, print), "an empty key in t is an error")
check(dump() == before, "labels as before after an empty key")
for i = 1, 15 do rec.label("k" .. string.char(96 + i), nil) end
rec.label(("k"):rep(63), "orig")
rec.with_labels({[("k"):rep(70)] = "tmp"}, function() end)
check(dump() == ("k"):rep(63) .. "=orig", "a long key's previous value back: " .. dump())
rec.label(("k"):rep(63), nil)
rec.with_labels({a = "1"}, function() rec.label("b", "2") end)
check(dump() == "", "labels fn set are undone: " .. dump())
-- a finalizer that labels while labels() runs: no lock held, nothing raised
for i = 1, 16 do rec.label("f" .. i, "v") end
local armed = true
local function mk()
  local p = newproxy(true)
  getmetatable(p).__gc = function() if armed then rec.label("f1", "w") end end
  return p
end
for _ = 1, 500 do
  for _ = 1, 50 do mk() end
  local ok, e = pcall(rec.labels)
  check(ok, "labels() under finalizers: " .. tostring(e))
end
armed = false
collectgarbage()
check(rec.label("f2", "x") == true, "label() works after the finalizers")
for i = 1, 16 do rec.label("f" .. i, nil) end
if arg[1] == "many" then
  for i = 1, 5000 do rec.label("request", tostring(i)) local x = {i} end
  rec.label("request", nil)
end
print("plugins: ok")
