#!/bin/sh
# Runs a python3 test driver with the arguments Bazel passes.
exec python3 "$@"
