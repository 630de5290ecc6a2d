#!/usr/bin/env bash
# install.sh -- builds ljm and installs it like a Unix tool (as root for the
# default prefix):
#
#   bash scripts/install.sh [PREFIX]              # default /usr/local
#   bash scripts/install.sh --uninstall [PREFIX]  # removes exactly that
#
# Installs PREFIX/bin/ljm, the Lua modules PREFIX/lib/lua/5.1/ljm/recorder.so
# and check_core.so (where LuaJIT's default package.cpath looks for require
# "ljm.recorder" when PREFIX is /usr/local) and PREFIX/share/lua/5.1/ljm/check.lua
# (package.path: require "ljm.check"), and the man page
# PREFIX/share/man/man1/ljm.1.
# It installs the Debian packages the build needs (scripts/setup.sh), and
# never replaces the machine's LuaJIT.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = "--uninstall" ]; then
  exec bash "$root/scripts/install-files.sh" --uninstall "${2:-/usr/local}"
fi
prefix=${1:-/usr/local}
bash "$root/scripts/setup.sh"
cd "$root"
out=$(bazel build -c opt --symlink_prefix=/ //:ljm //recorder:ljm/recorder.so \
  //check:ljm/check_core.so 2>&1) || {
  printf '%s\n' "$out" >&2
  echo "install: the build failed" >&2
  exit 1
}
bin=$(bazel info -c opt bazel-bin 2>/dev/null)
bash "$root/scripts/install-files.sh" "$prefix" "$bin/cli/ljm" "$bin/recorder/ljm/recorder.so" \
  "$bin/check/ljm/check_core.so" "$root/check/ljm/check.lua" "$root/doc/ljm.1"
