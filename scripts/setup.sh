#!/usr/bin/env bash
# Installs every Debian package the build, the tests and the benchmarks need.
# Idempotent and quiet: prints nothing when everything is already present.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

packages=(
  bazel-bootstrap            # Bazel 4.2.3 (offline build, see WORKSPACE)
  clang libclang-rt-14-dev   # compiler, libFuzzer and sanitizer runtimes
  luajit libluajit-5.1-dev   # the VM the recorder profiles; ljm record embeds it
  libprotobuf-c-dev protobuf-c-compiler protobuf-compiler  # pprof writer
  libxml2-dev libxml2-utils  # SVG writer (xmlwriter) and xmllint in tests
  nodejs                     # runs the SVG flame graph's script in a test
  zlib1g-dev libzstd-dev zstd  # gzip input, .pb.gz, .heaptrack.gz/.zst
  golang-go                  # go tool pprof, to check pprof output in tests
  heaptrack                  # heaptrack_print, to check Heaptrack output in tests
  python3                    # test drivers
  dpkg-dev                   # apt-get source (LuaJIT internal headers)
  time                       # /usr/bin/time for peak RSS in benchmarks
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Further steps of components (each idempotent and quiet when done).
for step in "$here"/setup.d/*.sh; do
  [ -e "$step" ] || continue
  bash "$step"
done
