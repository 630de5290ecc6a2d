#!/bin/sh
# Runs a python3 test driver with the arguments Bazel passes, the tests'
# library (this folder, in the runfiles: Bazel starts a test at their root)
# on its module path.
PYTHONPATH="$PWD/tests/lib${PYTHONPATH:+:$PYTHONPATH}" exec python3 "$@"
