#!/usr/bin/env bash
# Installs the Debian packages ljm needs to build and run; with --tests also
# what the tests and benchmarks need (the real viewers: go tool pprof,
# heaptrack, Chromium, ...). Idempotent and quiet: prints nothing when
# everything is present, one "setup: installing ..." line when it installs.
#   bash scripts/setup.sh            # build and run (scripts/demo.sh)
#   bash scripts/setup.sh --tests    # + tests (scripts/test.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=setup-lib.sh
. "$here/setup-lib.sh"
tests=0
[ "${1:-}" = "--tests" ] && tests=1
release=$(codename)
case $release in
  bookworm|trixie) ;;
  *) echo "setup: note: this machine runs '${release:-an unknown release}'; ljmkit is tested on Debian 12 (bookworm) and 13 (trixie)" >&2 ;;
esac

# The system's LuaJIT: ljm record runs on it and ljm links its library.
# Debian 12 ships Debian's luajit and OpenResty's luajit2, which conflict
# (installing one removes the other), so whichever flavour is installed is
# completed, never swapped; on a machine with neither, Debian's. Debian 13
# ships OpenResty's LuaJIT as luajit and no luajit2. The recorder is built
# for every tree either way (setup.d/luajit-source.sh fetches their
# sources). Only the test command swaps, where the release has luajit2: the
# nginx test needs nginx's Lua module, which there needs luajit2.
lists_read=0
need_lists() {  # apt's lists, before asking what this release offers
  [ $lists_read -eq 0 ] || return 0
  has_candidate dpkg-dev || apt_update
  lists_read=1
}
if installed luajit2 || installed libluajit2-5.1-dev || installed libluajit2-5.1-2; then
  system_luajit=(luajit2 libluajit2-5.1-dev)
elif [ $tests -eq 1 ] && need_lists && has_candidate luajit2; then
  system_luajit=(luajit2 libluajit2-5.1-dev)
  if installed luajit || installed libluajit-5.1-dev || installed libluajit-5.1-2; then
    echo "setup: the nginx test needs OpenResty's luajit2 (nginx's Lua module): replacing Debian's luajit (test machine)" >&2
  fi
else
  system_luajit=(luajit libluajit-5.1-dev)
fi

# The sanitizer and libFuzzer runtimes of the clang this release ships
# (libclang-rt-14-dev on Debian 12, -19- on Debian 13).
clang_major() {
  local v=""
  installed clang && v=$(dpkg-query -W -f='${Version}' clang 2>/dev/null || true)
  if [ -z "$v" ]; then
    need_lists
    v=$(apt-cache policy clang 2>/dev/null | sed -n 's/^ *Candidate: //p') || true
  fi
  v=${v#*:}
  echo "${v%%[.~+-]*}"
}
major=$(clang_major)
[[ $major =~ ^[0-9]+$ ]] || fail "choosing clang's runtime package" "apt offers no clang on '$release'" \
  "check the mirrors in /etc/apt/sources.list"

packages=(
  bazel-bootstrap            # Bazel 4.2.3 (offline build, see WORKSPACE)
  clang "libclang-rt-$major-dev"  # compiler, libFuzzer and sanitizer runtimes
  "${system_luajit[@]}"      # the VM ljm record runs scripts on, its headers
  libprotobuf-c-dev protobuf-c-compiler protobuf-compiler  # pprof writer
  libxml2-dev                # SVG writer (xmlwriter)
  zlib1g-dev libzstd-dev     # gzip input, .pb.gz, .heaptrack.gz/.zst
  libncurses-dev             # ljm top's terminal screen
  dpkg-dev xz-utils          # apt-get source, dpkg-source, Sources.xz (LuaJIT internal headers)
)
if [ $tests -eq 1 ]; then
  packages+=(
    zip                      # Bazel packs each test's output files with it
    cmake make git           # build Tarantool's LuaJIT fork (its CMake reads its version with git)
    libxml2-utils            # xmllint checks the SVG
    zstd                     # decompresses .heaptrack.zst in tests
    nodejs                   # runs the SVG's script (fake DOM) and Playwright
    golang-go                # go tool pprof, the pprof client
    heaptrack                # heaptrack_print, the heaptrack client
    python3                  # test drivers
    man-db groff             # man -l renders the manual page (man_test)
    time                     # /usr/bin/time: peak RSS in benchmarks and hostile_inputs_test
    valgrind                 # counts instructions against the cost budgets (budget_test)
    nginx-light libnginx-mod-http-lua  # the OpenResty example's server
    wrk                      # load for the nginx test and benchmark
    tmux                     # a real terminal for ljm top (top_test)
    neovim                   # a real application recording itself (nvim_test)
    love xvfb                # a game recording itself on Xvfb (love_test)
  )
  # A real program on another LuaJIT (its bundled fork; tarantool_host_test),
  # where the release ships it; scripts/test.sh says when it is not run.
  need_lists
  if installed tarantool || has_candidate tarantool; then packages+=(tarantool); fi
fi

apt_install "installing the Debian packages" "${packages[@]}"

# Further steps (each idempotent and quiet when done): the build's, then
# with --tests the tests' (heaptrack_gui on Xvfb, Chromium and npm tools).
# Each says why it failed; a step that dies without a word is named here.
steps=("$here"/setup.d/*.sh)
[ $tests -eq 1 ] && steps+=("$here"/setup-tests.d/*.sh)
for step in "${steps[@]}"; do
  [ -e "$step" ] || continue
  bash "$step" || fail "$(basename "$step" .sh)" "exit status $?" "its messages are above"
done
