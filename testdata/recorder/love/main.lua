-- main.lua -- a LÖVE game that records itself with call stacks (love_test.py):
-- LÖVE's own Lua (boot.lua), its C++ objects with finalizers (canvases,
-- image data, texts, compressed data), a Lua callback that C++ calls
-- (LÖVE's ImageData:mapPixel, Lua over the FFI), a coroutine, and JIT-heavy noise loops, for
-- LJM_FRAMES frames. LJM_OUT: the stream; LJM_SAMPLE, LJM_SEED: a sampled
-- recording instead; LJM_DONE gets "ok", the figures and the build the
-- recorder found, or the error.
local done = os.getenv("LJM_DONE")

local function say(s)
  local f = assert(io.open(done, "a"))
  f:write(s, "\n")
  f:close()
end

-- An error must end the run (LÖVE would show it on the screen and wait).
function love.errorhandler(msg)
  say("ERROR " .. tostring(msg) .. "\n" .. debug.traceback())
  os.exit(3)
end

local rec = require "ljm.recorder"
local FRAMES = tonumber(os.getenv("LJM_FRAMES")) or 120
local frames, pixels, noise, made = 0, 0, 0, 0
local canvas, text, keep = nil, nil, {}

local function shade(x, y, r, g, b, a)
  pixels = pixels + 1
  local t = {x, y, r}  -- the callback allocates: under mapPixel's frames
  return (x % 7) / 7, (y % 5) / 5, t[3], a
end

local producer = coroutine.wrap(function()
  local i = 0
  while true do
    i = i + 1
    coroutine.yield(("item %d %s"):format(i, string.rep("x", i % 40)))
  end
end)

function love.load()
  local sample, seed = os.getenv("LJM_SAMPLE"), tonumber(os.getenv("LJM_SEED"))
  assert(rec.start(os.getenv("LJM_OUT"), {stacks = true, sample = sample,
                                          seed = sample and seed or nil}))
end

function love.update(dt)
  frames = frames + 1
  local row = {}
  for i = 1, 300 do row[i] = {i, producer()} end
  for i = 1, 2000 do noise = noise + love.math.noise(i * 0.01, frames * 0.1) end
  if frames % 10 == 0 then
    local img = love.image.newImageData(32, 32)
    img:mapPixel(shade)
    canvas = love.graphics.newCanvas(64, 64)
    text = love.graphics.newText(love.graphics.getFont(), ("frame %d"):format(frames))
    keep[#keep % 4 + 1] = love.data.compress("data", "zlib", table.concat(row[1], " "):rep(50))
    made = made + 1
  end
  if frames % 30 == 0 then collectgarbage() end  -- the objects' finalizers free C++ memory
  if frames >= FRAMES then
    local ok, err = rec.stop()
    say(("%s %s %d %d %d %s"):format(ok and "ok" or "FAILED", tostring(err), frames, pixels, made,
                                     tostring(rec.build())))
    love.event.quit()
  end
end

function love.draw()
  if canvas then love.graphics.draw(canvas, 10, 40) end
  if text then love.graphics.draw(text, 10, 10) end
end
