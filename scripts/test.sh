#!/usr/bin/env bash
# Installs what is missing (build and test dependencies; on a test machine
# that may mean Chromium, heaptrack_gui and Xvfb: see scripts/setup.sh), then
# runs every test twice: a normal build and an ASan+UBSan build
# (--config=asan). Ends with one line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests || { echo "test: the set-up failed (its reason is above)"; echo "0 passed, 1 failed"; exit 1; }

passed=0 failed=0
why() {  # why //pkg:name -> the first FAIL line (else the last line) of its log
  local t=${1#//} f
  f="bazel-testlogs/${t/://}/test.log"
  [ -r "$f" ] || { echo "no test.log"; return; }
  { grep -m1 -E '^FAIL|Error|error:' "$f" || grep -v '^\s*$' "$f" | tail -n 1; } | cut -c1-240
}
run() {  # run <label> <bazel test args...>
  local label=$1 log
  shift
  log=$(mktemp)
  bazel test --test_summary=short --keep_going "$@" //... >"$log" 2>&1
  local rc=$?
  # Lines like "//decoder/tests:model_test   PASSED in 0.1s".
  local p f
  p=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log")
  f=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|FLAKY|INCOMPLETE|FAILED TO BUILD)' "$log")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1  # the build itself failed before any test ran
    tail -n 40 "$log"
  fi
  # Each failed test with its first failure line, on the same line: CI
  # shows only the end of this output.
  grep -E '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|FLAKY|INCOMPLETE|FAILED TO BUILD)' "$log" |
    while read -r target rest; do
      echo "[$label] $target $rest -- $(why "$target")"
    done
  echo "[$label] $p passed, $f failed"
  passed=$((passed + p))
  failed=$((failed + f))
  rm -f "$log"
}

# The cost budgets (bench/budgets.txt) are kept per compiler: where this
# one has none, //bench:budget_test is not run, and not counted as passed.
compiler="clang-$(clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -n 1)"
budgets=()
grep -qxF "[$compiler]" bench/budgets.txt || budgets=(--test_tag_filters=-cost_budget)
run default "${budgets[@]}"
# The recorder's tests on the LuaJITs beyond Debian 12's two run once, here
# above (plain_only: their VMs would be built again in the ASan tree, CI
# time; and tarantool, not built for ASan, with a sanitized module).
# system_vm: the recorder's tests on the system's LuaJIT, which is one of
# Debian 12's two that the ASan run covers as built here.
# viewer: the tests that open converted files in heaptrack_gui and Chromium
# run once, here above: sanitizing ljm adds nothing to what a viewer shows,
# and the conversions they make are the exporters' own tests, which do run
# sanitized (CI time).
run asan --config=asan --build_tests_only --test_tag_filters=-plain_only,-system_vm,-viewer
# LuaJIT trees the build could not get (bazel/luajit_trees.bzl): not covered,
# and not counted as passed.
missing=$(sed -n 's/^MISSING = //p' "$(bazel info output_base 2>/dev/null)/external/luajit_trees/flavours.bzl" 2>/dev/null)
[ -z "$missing" ] || [ "$missing" = "{}" ] || echo "LuaJIT trees not covered: $missing"
[ ${#budgets[@]} -eq 0 ] || echo "Cost budgets not checked: bench/budgets.txt has none for $compiler (bazel run //bench:budget_test -- --update records them)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
