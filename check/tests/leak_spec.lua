-- leak_spec.lua -- a busted spec for check_test.py: one test leaks (and
-- fails with ljm.check's report), the others pass.
require("ljm.busted")

local kept = {}
local function keep(v)
  kept[#kept + 1] = { v }
end

describe("ljm.busted", function()
  it("passes a function that leaves nothing behind", function()
    assert.no_leak(function()
      local t = {}
      for i = 1, 20 do t[i] = { i } end
    end)
  end)

  it("fails a function that keeps a table a call", function()
    assert.no_leak(function() keep(1) end)
  end)

  it("passes a leak when told it is one", function()
    assert.is_not.no_leak(function() keep(2) end)
  end)

  it("passes a peak below its limit", function()
    assert.memory_below("1MB", function(n) return ("x"):rep(n) end, 1000)
  end)
end)
