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

packages=(
  bazel-bootstrap            # Bazel 4.2.3 (offline build, see WORKSPACE)
  clang libclang-rt-14-dev   # compiler, libFuzzer and sanitizer runtimes
  luajit libluajit-5.1-dev   # the VM the recorder profiles; ljm record embeds it
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
    time                     # /usr/bin/time for peak RSS in benchmarks
  )
fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# Debian's luajit and OpenResty's luajit2 conflict: installing one removes
# the other. A user's luajit2 (nginx's Lua module needs it) is never
# swapped; only the test command, on a test machine, may, and says so.
if installed luajit2 || installed libluajit2-5.1-dev || installed libluajit2-5.1-2; then
  if [ $tests -eq 1 ]; then
    echo "setup: the tests need Debian's luajit: replacing OpenResty's luajit2 (test machine)" >&2
  else
    echo "setup: OpenResty's luajit2 is installed; not replacing it with Debian's luajit," >&2
    echo "setup: which the recorder and ljm record are built for so far: stopping" >&2
    exit 1
  fi
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
