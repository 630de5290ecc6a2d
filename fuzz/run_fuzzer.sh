#!/bin/sh
# A short, bounded, reproducible libFuzzer run seeded with the small corpus
# streams; any crash, leak, sanitizer report or hang (-timeout) fails it.
set -eu
fuzzer=$1; seeds=$2; secs=${3:-20}
work=${TEST_TMPDIR:-$(mktemp -d)}/corpus
mkdir -p "$work"
for f in "$seeds"/*.ljm; do cp "$f" "$work/"; done
"$fuzzer" -seed=1 -max_total_time="$secs" -timeout=5 -rss_limit_mb=1024 \
  -max_len=4096 -print_final_stats=1 "$work" 2>&1 | tail -n 25
