-- phases.lua: three phases a time window can tell apart (tests/window_test.py).
-- keep_a keeps 2000 strings; then churn makes short-lived tables while half
-- of keep_a's strings are dropped and collected; then keep_c keeps 3000
-- strings. A busy wait of 0.3 s separates the phases, so their events carry
-- different time marks.
local kept = {}

local function keep_a(n)
  for i = 1, n do kept[#kept + 1] = "a" .. string.rep("x", 100) .. i end
end

local function churn(n)
  local sum = 0
  for i = 1, n do
    local t = { i, i + 1, tostring(i) }
    sum = sum + #t
  end
  return sum
end

local function keep_c(n)
  for i = 1, n do kept[#kept + 1] = "c" .. string.rep("y", 200) .. i end
end

local function wait(s)
  local stop = os.clock() + s
  while os.clock() < stop do end
end

keep_a(2000)
wait(0.3)
churn(20000)
for i = 1, 1000 do kept[i] = false end
collectgarbage()
wait(0.3)
keep_c(3000)
wait(0.3)
print("phases: ok")
