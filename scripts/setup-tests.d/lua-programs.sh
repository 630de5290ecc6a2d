#!/usr/bin/env bash
# Installs the Lua programs nobody here wrote that tests/real_programs_test
# records under `luajit`: Debian's luacheck (lua-check, run over
# penlight's sources), ldoc, and the C modules lua-cjson and lua-lpeg
# (loaded after a recording starts); and busted (lua-busted), the test
# runner check/tests/check_test runs a spec with. Idempotent; prints nothing when
# everything is present, one "setup: installing ..." line on stderr when it
# installs.
set -euo pipefail

packages=(
  lua-check     # luacheck: a linter, pure Lua, many small functions
  lua-penlight  # pl: what luacheck and ldoc read
  lua-ldoc      # ldoc: a documentation generator
  lua-cjson     # cjson.so: a C module that allocates through Lua
  lua-lpeg      # lpeg.so: a C module whose matches build Lua tables
  lua-busted    # busted: the test runner ljm.busted plugs into
)

# shellcheck source=../setup-lib.sh
. "$(dirname "$0")/../setup-lib.sh"
apt_install "installing Debian's Lua programs" "${packages[@]}"
