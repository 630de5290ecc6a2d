-- binary-trees (the Benchmarks Game), depth from arg[1]: table allocation.
local function bottom_up(depth)
  if depth == 0 then return {} end
  depth = depth - 1
  return {bottom_up(depth), bottom_up(depth)}
end

local function check(tree)
  if tree[1] then return 1 + check(tree[1]) + check(tree[2]) end
  return 1
end

local N = tonumber(arg and arg[1]) or 15
local maxdepth = math.max(6, N)
local stretch = maxdepth + 1
local sum = check(bottom_up(stretch))
local long_lived = bottom_up(maxdepth)
for depth = 4, maxdepth, 2 do
  local iters = 2 ^ (maxdepth - depth + 4)
  local c = 0
  for _ = 1, iters do c = c + check(bottom_up(depth)) end
  sum = sum + c
end
sum = sum + check(long_lived)
return sum
