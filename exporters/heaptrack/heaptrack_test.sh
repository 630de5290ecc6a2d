#!/bin/sh
# Runs heaptrack_test.py (heaptrack_print and zstd come from the system).
export HOME="$TEST_TMPDIR"
exec python3 exporters/heaptrack/heaptrack_test.py "$@"
