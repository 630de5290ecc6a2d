#!/usr/bin/env bash
# Installs what is missing, builds ljm, records the bundled example
# (examples/quickstart/app.lua: a request handler whose cache never lets go)
# with `ljm record`, and prints the memory report of the lines that
# allocate. The recording stays in a fresh temporary folder, named at the end.
# Every failure ends in one line saying which step failed and why.
set -euo pipefail
cd "$(dirname "$0")/.."
trap 'rc=$?; echo "demo: failed (exit $rc) at: $BASH_COMMAND" >&2; exit $rc' ERR
bash scripts/setup.sh || { echo "demo: the set-up failed (its reason is above)" >&2; exit 1; }
if ! log=$(bazel build //:ljm 2>&1); then
  printf '%s\n' "$log" | tail -n 30 >&2
  echo "demo: building ljm failed: $(printf '%s\n' "$log" | grep -m1 -E 'error|ERROR' || echo 'see above')" >&2
  exit 1
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/ljmkit-demo.XXXXXX")
# -joff: every allocation at its line (with the JIT on, compiled loops are charged to their traces).
bazel-bin/cli/ljm record -joff -o "$out/app.ljm" examples/quickstart/app.lua
bazel-bin/cli/ljm report "$out/app.ljm"
echo
echo "demo: the recording is $out/app.ljm (README.md says what to open it with)"
