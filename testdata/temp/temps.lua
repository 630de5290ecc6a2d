-- temps.lua -- allocations whose fate is known by construction, for
-- tests/temporaries_test.py (run with -joff: every allocation at its line).
--   grow (line 10)  fills a table from empty: its array part is allocated,
--                   then reallocated to twice the size again and again with
--                   nothing allocated or freed between, so every block but
--                   the last is freed right after it was made: temporary
--   held (line 16)  tables that live to the end: never temporary
local N = tonumber(arg and arg[1]) or 200
local function grow(t, n)
  for i = 1, n do t[i] = i end
  return t
end
local kept = {}
for r = 1, N do kept[r] = grow({}, 1000) end
local held = {}
for i = 1, N do held[i] = { i, i } end
local parts = {}
for i = 1, 2000 do parts[i] = string.rep("x", i % 7) end
local joined = table.concat(parts, ",")
return #joined + #held + #kept
