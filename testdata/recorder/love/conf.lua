-- conf.lua -- the game of love_test.py: a small window, no audio (Xvfb
-- has no sound card), no joystick subsystem.
function love.conf(t)
  t.identity = "ljm_love_record"
  t.window.title = "ljm love_test"
  t.window.width, t.window.height = 320, 240
  t.window.vsync = 0
  t.modules.audio, t.modules.sound, t.modules.joystick = false, false, false
end
