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
# Recipes (fuzz/ljm_mutator.c) expand to 32 KiB at most here: deep and
# wide stack trees, long names and reference chains the amplification
# bounds check, small enough for many runs in SECS seconds and within
# -timeout under ASan (a stack printed whole costs up to 258 frames per event).
export LJM_FUZZ_BUDGET=${LJM_FUZZ_BUDGET:-32768}
[ "$n" -ge 10 ] || { echo "only $n seed inputs found"; exit 1; }
# The fuzzer's own status decides (a pipe into tail would hide it).
log=${TEST_TMPDIR:-/tmp}/fuzz.log
rc=0
"$fuzzer" -runs=0 "$work"/* >"$log" 2>&1 || rc=$?
tail -n 3 "$log"
[ $rc = 0 ] || { grep -m1 -A30 'ERROR\|AMPLIFICATION' "$log"; exit $rc; }
"$fuzzer" -seed=1 -max_total_time="$secs" -timeout=15 -rss_limit_mb=1024 \
  -max_len=4096 -print_final_stats=1 -artifact_prefix="${TEST_UNDECLARED_OUTPUTS_DIR:-.}/" \
  "$work" >"$log" 2>&1 || rc=$?
[ $rc = 0 ] || grep -m1 -B2 -A30 'ERROR\|AMPLIFICATION' "$log"
tail -n 25 "$log"
exit $rc
