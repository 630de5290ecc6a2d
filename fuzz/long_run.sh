#!/bin/sh
# A long fuzzing run with the recipe generator (fuzz/ljm_mutator.c), one
# process: N executions on CORPUS (created if missing; new inputs are added
# to it), then the execution count and the coverage (libFuzzer's cov: edges
# and ft: features) from its final stats.
#
# usage: fuzz/long_run.sh [-k] N CORPUS [FUZZER] [SEED_DIR...]
#   -k          keep going after a failure: the input is saved in ARTIFACTS
#               and libFuzzer starts again on CORPUS for the executions left
#               (in one process: libFuzzer's -fork mode ran 30-100 times
#               slower here, reloading the corpus for every job)
#   FUZZER      default bazel-bin/fuzz/ljm_fuzzer (bazel build //fuzz:ljm_fuzzer)
#   SEED_DIR    copied into CORPUS first (default: testdata/synthetic,
#               testdata/ext, testdata/fuzz when CORPUS is empty)
# environment: ARTIFACTS (default /tmp/fuzz-found/), TIMEOUT seconds per
#   input (60), RSS_MB (4096), LJM_FUZZ_BUDGET (largest recipe expansion,
#   default 4 MiB in the target), LJM_FUZZ_RECIPES=0 (libFuzzer's own
#   mutations only).
# e.g. fuzz/long_run.sh -k 10000000 /tmp/ljm-corpus
set -eu
keep=0
if [ "${1:-}" = -k ]; then keep=1; shift; fi
[ $# -ge 2 ] || { sed -n '2,20p' "$0"; exit 2; }
runs=$1; corpus=$2; shift 2
fuzzer=${1:-bazel-bin/fuzz/ljm_fuzzer}
[ $# -gt 0 ] && shift
art=${ARTIFACTS:-/tmp/fuzz-found/}
mkdir -p "$corpus" "$art"
if [ $# -eq 0 ] && [ -z "$(ls -A "$corpus")" ]; then
  set -- testdata/synthetic testdata/ext testdata/fuzz
fi
for d in "$@"; do
  for f in "$d"/*; do
    case $f in *.ljm|*.bin|*.ljh) cp "$f" "$corpus/" ;; esac
  done
done
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=16:malloc_context_size=8}
start=$(date +%s)
done_runs=0 failures=0 rc=0 cov="" ft="" log=""
while [ "$done_runs" -lt "$runs" ]; do
  log=$(mktemp /tmp/ljm-long-run.XXXXXX)
  set -- -runs=$((runs - done_runs)) -timeout="${TIMEOUT:-60}" -rss_limit_mb="${RSS_MB:-4096}" \
    -max_len=4096 -print_final_stats=1 -print_coverage=0 -artifact_prefix="$art"
  echo "command: $fuzzer $* $corpus (log $log)"
  rc=0
  "$fuzzer" "$@" "$corpus" >"$log" 2>&1 || rc=$?
  # This process's executions: its final stats, or its last status line
  # (a failure stops before the stats).
  n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  last=$(grep -E '^#[0-9]+.*cov: [0-9]+' "$log" | tail -n 1 || true)
  [ -n "$n" ] || n=$(printf '%s\n' "$last" | sed -n 's/^#\([0-9]*\).*/\1/p')
  done_runs=$((done_runs + ${n:-0}))
  c=$(printf '%s\n' "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  f=$(printf '%s\n' "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
  [ -z "$c" ] || { cov=$c; ft=$f; }
  [ "$rc" -eq 0 ] && break
  failures=$((failures + 1))
  grep -E '^(AMPLIFICATION|==[0-9]+==ERROR|SUMMARY)' "$log" | head -n 3
  [ "$keep" = 1 ] || break
  [ "${n:-0}" -gt 0 ] || break  # failing at once: the corpus itself fails
done
secs=$(( $(date +%s) - start ))
[ -z "$log" ] || tail -n 12 "$log"
echo "executions: ${done_runs} in ${secs} s ($(( done_runs / (secs > 0 ? secs : 1) )) exec/s); coverage: cov ${cov:-?} ft ${ft:-?}; failures: ${failures}; exit $rc"
ls "$art" 2>/dev/null | sed 's/^/artifact: /' | tail -n 20
[ "$failures" -eq 0 ] || rc=1
exit $rc
