#!/usr/bin/env bash
# gen_big_test.sh GEN_BIG CHECK_PY -- the generator writes valid streams of
# big.lua's shape (check_gen_big.py) and the same bytes on every run.
set -euo pipefail
gen=$1
check=$2
tmp=${TEST_TMPDIR:-$(mktemp -d)}
status=0

# 0 and 1: edge cases; 250: keep's array grows; 200000: GC cycles and
# address reuse inside the loop.
for n in 0 1 250 200000; do
  "$gen" --iterations "$n" "$tmp/s$n.ljm" 2>"$tmp/s$n.err"
  python3 "$check" "$tmp/s$n.ljm" "$n" || status=1
done

# Deterministic: a second run, to stdout, writes identical bytes.
"$gen" --iterations 250 - >"$tmp/again.ljm" 2>/dev/null
cmp "$tmp/s250.ljm" "$tmp/again.ljm" || { echo "FAIL: output differs between runs"; status=1; }

# The summary line counts the events the checker saw.
grep -q '^gen_big: 1007 events, ' "$tmp/s250.err" || { echo "FAIL: summary: $(cat "$tmp/s250.err")"; status=1; }

# Bad usage fails.
if "$gen" --scale x "$tmp/bad.ljm" 2>/dev/null; then echo "FAIL: --scale x accepted"; status=1; fi
exit $status
