-- paused_busy.lua -- allocates for about a second and a half while
-- recorder/tests/paused_test.py sends SIGUSR1 and SIGUSR2 in a burst.
local t0, keep, n = os.clock(), {}, 0
while os.clock() - t0 < 1.5 do
  for i = 1, 50 do keep[i] = { i, tostring(i) } end
  n = n + 1
end
print("rounds", n > 0)
