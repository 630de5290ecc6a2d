#!/usr/bin/env bash
# run.sh -- heap snapshot benchmark: snapshot time and extra memory for heaps
# of 10 MB, 100 MB and 1 GB (bench/heap/grow.lua under the system's luajit),
# the snapshot's size, and `ljm heap` time and peak RSS on each. Prints
# figures only (not a test).
#   bench/heap/run.sh [MB...]      default: 10 100 1000
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
(cd "$root" && bazel build -c opt --symlink_prefix=/ //:ljm //recorder:ljm/recorder.so >/dev/null 2>&1) || {
  echo "run.sh: bazel build -c opt failed" >&2
  exit 1
}
bin=$(cd "$root" && bazel info -c opt bazel-bin 2>/dev/null)
dir=$(mktemp -d "${TMPDIR:-/tmp}/ljm-heap-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/cpath/ljm"
cp "$bin/recorder/ljm/recorder.so" "$dir/cpath/ljm/"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10 100 1000)
printf '%8s %10s %9s %11s %10s %9s %11s\n' "heap MB" "objects" "snap s" "extra RSS" "file MB" "heap s" "heap RSS"
for mb in "${sizes[@]}"; do
  read -r heap secs before peak < <(LUA_CPATH="$dir/cpath/?.so;;" luajit "$root/bench/heap/grow.lua" "$mb" "$dir/h.ljh")
  size=$(stat -c %s "$dir/h.ljh")
  /usr/bin/time -f '%e %M' -o "$dir/time" "$bin/cli/ljm" heap --json --top 1 "$dir/h.ljh" >"$dir/out.json"
  read -r hsecs hrss <"$dir/time"
  objects=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["objects"])' "$dir/out.json")
  printf '%8.0f %10d %9.2f %8.1f MB %10.1f %9.2f %8.0f MB\n' "$(echo "$heap / 1048576" | bc -l)" \
    "$objects" "$secs" "$(echo "($peak - $before) / 1024" | bc -l)" "$(echo "$size / 1048576" | bc -l)" \
    "$hsecs" "$(echo "$hrss / 1024" | bc -l)"
  rm -f "$dir/h.ljh"
done
