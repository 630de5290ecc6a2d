-- names.lua: functions called in every way a name can come from; each
-- allocates at a line of its own and notes what debug.getinfo (LuaJIT's own
-- traceback names) says of itself there: "NAME <line> <namewhat> <name>".
local N = 50
local keep = {}
local function note(line)
  local i = debug.getinfo(2, "n")
  print(("NAME %d %s %s"):format(line, i.namewhat ~= "" and i.namewhat or "-", i.name or "-"))
end

function global_fn(k)
  keep[#keep + 1] = {k}                             -- 12
  if k == 1 then note(12) end
end

local function local_fn(k)
  keep[#keep + 1] = {k}                             -- 17
  if k == 1 then note(17) end
end

local M = {}
function M.field_fn(k)
  keep[#keep + 1] = {k}                             -- 23
  if k == 1 then note(23) end
end

local Obj = {}
Obj.__index = Obj
function Obj:method_fn(k)
  keep[#keep + 1] = {k}                             -- 30
  if k == 1 then note(30) end
end

local function upvalue_fn(k)
  keep[#keep + 1] = {k}                             -- 35
  if k == 1 then note(35) end
end
local function calls_upvalue(k) upvalue_fn(k) end

local mt = {__index = function(t, key)
  keep[#keep + 1] = {key}                           -- 41
  if key == 1 then note(41) end
end}
local proxy = setmetatable({}, mt)

local function tail_target(k)
  keep[#keep + 1] = {k}                             -- 47
  if k == 1 then note(47) end
end
function tail_via_global(k) return tail_target(k) end

local o = setmetatable({}, Obj)
for k = 1, N do
  global_fn(k)
  local_fn(k)
  M.field_fn(k)
  o:method_fn(k)
  calls_upvalue(k)
  local _ = proxy[k]
  tail_via_global(k)
end
