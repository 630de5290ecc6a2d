-- names.lua OUT: a heap whose names are hard to draw (tests/heap_graph_test.py,
-- tests/browser/heap_graph_browser_test.py): keys and a metatable __name with
-- the characters DOT and mermaid treat specially, a newline, a control byte,
-- invalid UTF-8, a mermaid directive; then a heap snapshot to OUT.
local rec = require "ljm.recorder"
local T = { __name = 'Tar"get<b>#1|`x`&\\' }
holder = {}
holder['a "quoted" #key <b> |bar| `tick` &amp;\nline\1\255'] = setmetatable({ n = 1 }, T)
holder[7] = setmetatable({ n = 2 }, T)
holder.list = { setmetatable({ n = 3 }, T) }
-- a mermaid directive and comment (after U+2028), and a "style:" line
holder["p%%{init: {'theme':'dark'}}%% style:_a\226\128\168%%x"] = setmetatable({ n = 4 }, T)
assert(rec.snapshot(arg[1]))
