#!/bin/sh
# A long fuzzing run with the recipe generator (fuzz/ljm_mutator.c), one
# job, one process: N executions on CORPUS (created if missing; new inputs
# are added to it), then the execution count and the coverage (libFuzzer's
# cov: edges and ft: features) from its final stats.
#
# usage: fuzz/long_run.sh [-k] N CORPUS [FUZZER] [SEED_DIR...]
#   -k          keep going after a failure: libFuzzer's -fork=1 mode with
#               -ignore_crashes/-ignore_timeouts/-ignore_ooms (the known
#               amplification bugs would otherwise end the run at once);
#               failures are saved in ARTIFACTS
#   FUZZER      default bazel-bin/fuzz/ljm_fuzzer (bazel build //fuzz:ljm_fuzzer)
#   SEED_DIR    copied into CORPUS first (default: testdata/synthetic,
#               testdata/ext, testdata/fuzz when CORPUS is empty)
# environment: ARTIFACTS (default /tmp/fuzz-found/), TIMEOUT seconds per
#   input (60), RSS_MB (4096), LJM_FUZZ_BUDGET (largest recipe expansion,
#   default 4 MiB in the target).
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
log=$(mktemp /tmp/ljm-long-run.XXXXXX)
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=16:malloc_context_size=8}
set -- -runs="$runs" -timeout="${TIMEOUT:-60}" -rss_limit_mb="${RSS_MB:-4096}" \
  -max_len=4096 -print_final_stats=1 -print_coverage=0 -artifact_prefix="$art"
if [ $keep = 1 ]; then
  set -- "$@" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1
fi
echo "command: $fuzzer $* $corpus"
start=$(date +%s)
rc=0
"$fuzzer" "$@" "$corpus" >"$log" 2>&1 || rc=$?
secs=$(( $(date +%s) - start ))
tail -n 30 "$log"
# Executions and coverage: the final stats (one process), or the last
# status line (fork mode, whose children print their own).
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
last=$(grep -E '^#[0-9]+.*cov: [0-9]+' "$log" | tail -n 1)
[ -n "$execs" ] || execs=$(printf '%s\n' "$last" | sed -n 's/^#\([0-9]*\).*/\1/p')
cov=$(printf '%s\n' "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
ft=$(printf '%s\n' "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
echo "executions: ${execs:-?} in ${secs} s ($(( ${execs:-0} / (secs > 0 ? secs : 1) )) exec/s); coverage: cov ${cov:-?} ft ${ft:-?}; exit $rc; log $log"
ls "$art" 2>/dev/null | sed 's/^/artifact: /' | tail -n 20
exit $rc
