#!/usr/bin/env bash
# Installs what is missing, builds ljm and prints the memory report of the
# bundled example profile (Tarantool's documentation example, test.lua).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bazel build //:ljm >/dev/null 2>&1 || bazel build //:ljm
bazel-bin/cli/ljm report testdata/v3/test.ljm
