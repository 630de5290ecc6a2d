#!/bin/sh
# A short, bounded, reproducible libFuzzer run: first every regression input
# once (each must pass), then fuzzing seeded with them and the small corpus
# streams for SECS seconds. Any crash, leak, sanitizer report, broken
# invariant or hang (-timeout) fails it.
# usage: run_fuzzer.sh FUZZER SECS SEED_DIR...
set -eu
fuzzer=$1; secs=$2; shift 2
work=${TEST_TMPDIR:-$(mktemp -d)}/corpus
mkdir -p "$work"
for d in "$@"; do
  for f in "$d"/*; do
    case $f in *.ljm|*.bin|*.ljh) cp "$f" "$work/" ;; esac
  done
done
n=$(ls "$work" | wc -l)
[ "$n" -ge 10 ] || { echo "only $n seed inputs found"; exit 1; }
"$fuzzer" -runs=0 "$work"/* 2>&1 | tail -n 3
"$fuzzer" -seed=1 -max_total_time="$secs" -timeout=5 -rss_limit_mb=1024 \
  -max_len=4096 -print_final_stats=1 "$work" 2>&1 | tail -n 25
