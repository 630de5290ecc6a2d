#!/bin/sh
# Runs pprof_test.py; go needs a home and a build cache, Bazel gives neither.
export HOME="$TEST_TMPDIR" GOCACHE="$TEST_TMPDIR/gocache" GOPATH="$TEST_TMPDIR/go"
export GOFLAGS=-mod=mod GOTELEMETRY=off
exec python3 exporters/pprof/pprof_test.py "$@"
