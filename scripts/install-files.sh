#!/usr/bin/env bash
# install-files.sh -- copies built ljm files under a prefix, or removes what
# an earlier run copied (the list is kept in PREFIX/share/ljmkit/installed).
# scripts/install.sh builds and calls it; tests call it with built files.
#
#   install-files.sh PREFIX LJM_BINARY RECORDER_SO CHECK_CORE_SO CHECK_LUA MAN_PAGE
#   install-files.sh --uninstall PREFIX
set -euo pipefail

if [ "${1:-}" = "--uninstall" ]; then
  prefix=${2:?usage: install-files.sh --uninstall PREFIX}
  list=$prefix/share/ljmkit/installed
  [ -f "$list" ] || { echo "install: nothing of ljmkit is installed under $prefix" >&2; exit 1; }
  # Files first, then the directories the installs made, deepest first,
  # each only if empty.
  dirs=()
  [ -f "$list.dirs" ] && mapfile -t dirs < <(sort -r "$list.dirs")
  while IFS= read -r f; do
    [ -n "$f" ] && [ ! -d "$f" ] && rm -f "$f"
  done <"$list"
  rm -f "$list" "$list.dirs"
  for d in "${dirs[@]}"; do
    [ -n "$d" ] && rmdir "$d" 2>/dev/null || true
  done
  echo "install: removed ljmkit from $prefix" >&2
  exit 0
fi

prefix=${1:?usage: install-files.sh PREFIX LJM_BINARY RECORDER_SO CHECK_CORE_SO CHECK_LUA MAN_PAGE}
ljm=$2 so=$3 core=$4 check=$5 man=$6
for f in "$ljm" "$so" "$core" "$check" "$man"; do
  [ -f "$f" ] || { echo "install: $f: not found" >&2; exit 1; }
done

list=$prefix/share/ljmkit/installed
dirs=()
# mkdir -p, remembering each directory it creates (uninstall removes those).
make_dir() {
  local d=$1 missing=()
  while [ ! -d "$d" ]; do
    missing+=("$d")
    d=$(dirname "$d")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    mkdir -p "$1"
    dirs+=("${missing[@]}")
  fi
}
make_dir "$prefix/share/ljmkit"
files=()
put() {  # put SRC DEST MODE
  make_dir "$(dirname "$2")"
  install -m "$3" "$1" "$2"
  files+=("$2")
}
put "$ljm" "$prefix/bin/ljm" 755
put "$so" "$prefix/lib/lua/5.1/ljm/recorder.so" 644
put "$core" "$prefix/lib/lua/5.1/ljm/check_core.so" 644
put "$check" "$prefix/share/lua/5.1/ljm/check.lua" 644
put "$man" "$prefix/share/man/man1/ljm.1" 644
printf '%s\n' "${files[@]}" >"$list"
# Directories made by this run, and still those made by an earlier one.
{ [ -f "$list.dirs" ] && cat "$list.dirs"; [ ${#dirs[@]} -gt 0 ] && printf '%s\n' "${dirs[@]}"; } \
  | sort -u >"$list.dirs.new" || true
mv "$list.dirs.new" "$list.dirs"
echo "install: $prefix/bin/ljm, $prefix/lib/lua/5.1/ljm/recorder.so and check_core.so," \
  "$prefix/share/lua/5.1/ljm/check.lua, $prefix/share/man/man1/ljm.1" >&2
