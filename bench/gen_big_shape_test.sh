#!/usr/bin/env bash
# gen_big_shape_test.sh GEN_BIG CHECK_PY BIG_TXT -- at scale 1 the stream's
# per-site event counts and byte totals equal the reference report of the
# real big.lua profile (testdata/v3/big.txt).
set -euo pipefail
tmp=${TEST_TMPDIR:-$(mktemp -d)}
"$1" "$tmp/big.ljm" 2>"$tmp/gen.err"
grep -q '^gen_big: 3000069 events, ' "$tmp/gen.err" || { echo "FAIL: $(cat "$tmp/gen.err")"; exit 1; }
python3 "$2" --report "$3" "$tmp/big.ljm"
