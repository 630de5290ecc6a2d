#!/usr/bin/env bash
# Installs the Debian packages ljm needs to build and run; with --tests also
# what the tests and benchmarks need (the real viewers: go tool pprof,
# heaptrack, Chromium, ...). Idempotent and quiet: prints nothing when
# everything is present, one "setup: installing ..." line when it installs.
#   bash scripts/setup.sh            # build and run (scripts/demo.sh)
#   bash scripts/setup.sh --tests    # + tests (scripts/test.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tests=0
[ "${1:-}" = "--tests" ] && tests=1

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# The system's LuaJIT: ljm record runs on it and ljm links its library.
# Debian's luajit and OpenResty's luajit2 conflict (installing one removes
# the other), so whichever flavour is installed is completed, never
# swapped; on a machine with neither, Debian's. The recorder is built for
# both either way (setup.d/luajit-source.sh fetches their sources). Only
# the test command swaps: the nginx test needs nginx's Lua module, which
# needs luajit2; the recorder's tests build both flavours' VMs themselves.
if installed luajit2 || installed libluajit2-5.1-dev || installed libluajit2-5.1-2; then
  system_luajit=(luajit2 libluajit2-5.1-dev)
elif [ $tests -eq 1 ]; then
  system_luajit=(luajit2 libluajit2-5.1-dev)
  if installed luajit || installed libluajit-5.1-dev || installed libluajit-5.1-2; then
    echo "setup: the nginx test needs OpenResty's luajit2 (nginx's Lua module): replacing Debian's luajit (test machine)" >&2
  fi
else
  system_luajit=(luajit libluajit-5.1-dev)
fi

packages=(
  bazel-bootstrap            # Bazel 4.2.3 (offline build, see WORKSPACE)
  clang libclang-rt-14-dev   # compiler, libFuzzer and sanitizer runtimes
  "${system_luajit[@]}"      # the VM ljm record runs scripts on, its headers
  libprotobuf-c-dev protobuf-c-compiler protobuf-compiler  # pprof writer
  libxml2-dev                # SVG writer (xmlwriter)
  zlib1g-dev libzstd-dev     # gzip input, .pb.gz, .heaptrack.gz/.zst
  dpkg-dev                   # apt-get source (LuaJIT internal headers)
)
if [ $tests -eq 1 ]; then
  packages+=(
    libxml2-utils            # xmllint checks the SVG
    zstd                     # decompresses .heaptrack.zst in tests
    nodejs                   # runs the SVG's script (fake DOM) and Playwright
    golang-go                # go tool pprof, the pprof client
    heaptrack                # heaptrack_print, the heaptrack client
    python3                  # test drivers
    man-db                   # man -l renders the manual page (man_test)
    time                     # /usr/bin/time: peak RSS in benchmarks and hostile_inputs_test
    nginx-light libnginx-mod-http-lua  # the OpenResty example's server (needs luajit2)
    wrk                      # load for the nginx test and benchmark
    neovim                   # a real application recording itself (nvim_test)
    love xvfb                # a game recording itself on Xvfb (love_test)
    tarantool                # a real program on another LuaJIT (its bundled fork; tarantool_host_test)
  )
fi

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Further steps (each idempotent and quiet when done): the build's, then
# with --tests the tests' (heaptrack_gui on Xvfb, Chromium and npm tools).
steps=("$here"/setup.d/*.sh)
[ $tests -eq 1 ] && steps+=("$here"/setup-tests.d/*.sh)
for step in "${steps[@]}"; do
  [ -e "$step" ] || continue
  bash "$step"
done
