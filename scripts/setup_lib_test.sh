#!/usr/bin/env bash
# setup_lib_test.sh -- the set-up's shared functions under `set -euo pipefail`,
# as the set-up runs them: a package that was never installed, a missing
# file and an empty answer are values, never a silent exit; a failure is one
# "setup: <step> failed: <why> (<what to do>)" line; mirrors come from apt's
# sources in both formats, options and disabled entries included.
# usage: setup_lib_test.sh scripts/setup-lib.sh
set -euo pipefail
lib=$1
failures=0 checks=0
check() {  # check WHAT COMMAND...
  local what=$1
  shift
  checks=$((checks + 1))
  if ! "$@"; then
    echo "FAIL: $what"
    failures=$((failures + 1))
  fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Each function runs in a shell of its own with the set-up's options, so an
# exit inside it shows as that shell's status and output.
in_lib() {
  LJM_APT_ETC="$tmp/apt" bash -c 'set -euo pipefail; . "$1"; shift; "$@"; echo "went on"' _ "$lib" "$@" 2>&1
}

out=$(in_lib installed ljmkit-no-such-package-xyz || true)
check "installed: an absent package is false, and the script goes on ($out)" \
  test "$out" = ""
out=$(in_lib installed_version ljmkit-no-such-package-xyz)
check "installed_version: nothing for an absent package ($out)" test "$out" = "went on"
out=$(in_lib fail "doing a thing" "it broke" "try again" || true)
check "fail: one line naming the step, why and what to do ($out)" \
  test "$out" = "setup: doing a thing failed: it broke (try again)"

# Mirrors: the one-line format (with options) and deb822 (an entry turned off
# and a trailing slash), main and security apart.
mkdir -p "$tmp/apt/sources.list.d"
printf '%s\n' '# comment' \
  'deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian/ trixie main' \
  >"$tmp/apt/sources.list"
printf '%s\n' 'Types: deb' 'URIs: http://off.example/debian' 'Suites: bookworm' 'Enabled: no' '' \
  'Types: deb deb-src' 'URIs: http://local.example/debian/' 'Suites: bookworm bookworm-updates' '' \
  'Types: deb' 'URIs: http://sec.example/debian-security' 'Suites: bookworm-security' \
  >"$tmp/apt/sources.list.d/debian.sources"
out=$(in_lib apt_uri trixie)
check "apt_uri trixie from sources.list ($out)" test "$out" = $'http://mirror.example/debian\nwent on'
out=$(in_lib apt_uri bookworm)
check "apt_uri bookworm from .sources, the disabled entry skipped ($out)" \
  test "$out" = $'http://local.example/debian\nwent on'
out=$(in_lib apt_uri bookworm-security)
check "apt_uri bookworm-security ($out)" test "$out" = $'http://sec.example/debian-security\nwent on'
out=$(in_lib apt_uri sid)
check "apt_uri of a suite no source serves: nothing ($out)" test "$out" = "went on"
rm -f "$tmp/apt/sources.list" "$tmp/apt/sources.list.d/debian.sources"
out=$(in_lib apt_uri bookworm)
check "apt_uri with no sources at all: nothing ($out)" test "$out" = "went on"

# No script of the set-up names an archive host.
dir=$(dirname "$lib")
hosts=$(grep -rlE 'https?://[a-z0-9.-]*(debian|ubuntu)\.(org|com|net)' "$dir" || true)
check "no archive host in scripts/ ($hosts)" test -z "$hosts"

echo "setup-lib: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
