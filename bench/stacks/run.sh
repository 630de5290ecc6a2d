#!/usr/bin/env bash
# run.sh -- deep and wide call trees converted to every format: time and
# peak RSS at 10 k, 100 k and 1 M nodes, so near-linear growth shows (a
# figure ~10x the one before it per step). Not a test: it prints figures.
#
#   bench/stacks/run.sh                 streams in a temp dir, removed after
#   LJM_BENCH_DIR=DIR bench/stacks/run.sh   keep (and reuse) them in DIR
#   LJM_BENCH_SIZES="10000 100000"      other sizes
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
sizes=${LJM_BENCH_SIZES:-"10000 100000 1000000"}
(cd "$root" && bazel build -c opt --symlink_prefix=/ //:ljm >/dev/null 2>&1) || {
  echo "run.sh: bazel build -c opt //:ljm failed" >&2
  exit 1
}
ljm=$(cd "$root" && bazel info -c opt bazel-bin 2>/dev/null)/cli/ljm

if [ -n "${LJM_BENCH_DIR:-}" ]; then
  dir=$LJM_BENCH_DIR
  mkdir -p "$dir"
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/ljm-stacks.XXXXXX")
  trap 'rm -rf "$dir"' EXIT
fi

formats="text:txt folded:folded svg:svg markdown:md json:json pprof:pb.gz heaptrack:heaptrack.gz speedscope:speedscope.json heapprofile:heapprofile ljm:ljm"
printf '%-5s %8s %12s' shape nodes "input B"
for f in $formats; do printf ' %18s' "${f%%:*}"; done
printf '\n%28s' ""
for f in $formats; do printf ' %18s' "s / MB"; done
echo
for shape in deep wide; do
  for n in $sizes; do
    in=$dir/$shape$n.ljm
    [ -s "$in" ] || PYTHONPATH="$root/tests/lib" python3 "$root/bench/stacks/gen_tree.py" "$shape" "$n" "$in" 2>/dev/null
    printf '%-5s %8d %12d' "$shape" "$n" "$(stat -c %s "$in")"
    for f in $formats; do
      out=$dir/out.${f#*:}
      t0=$EPOCHREALTIME
      if /usr/bin/time -f '%M' -o "$dir/rss" "$ljm" convert -q -f "${f%%:*}" -o "$out" "$in" \
          >/dev/null 2>"$dir/err"; then
        t1=$EPOCHREALTIME
        printf ' %18s' "$(awk -v a="$t0" -v b="$t1" -v k="$(tail -n 1 "$dir/rss")" \
          'BEGIN{printf "%.2f / %d", b - a, k / 1024}')"
      else
        printf ' %18s' failed
      fi
      rm -f "$out"
    done
    echo
  done
done
