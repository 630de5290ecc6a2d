#!/usr/bin/env bash
# run.sh -- the decoder/report and converter benchmark (not a test: it
# prints figures, no pass/fail). See bench/README.md for the targets.
#
#   bench/run.sh            streams go to a temporary directory, removed after
#   LJM_BENCH_DIR=DIR bench/run.sh   keep them (and reuse existing ones) in DIR
#   LJM_BENCH_RUNS=N        repetitions per measurement, best one kept (3)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
runs=${LJM_BENCH_RUNS:-3}

# -- Build (optimised); ask Bazel where the outputs are instead of trusting
# the bazel-bin symlink, which other builds in the tree may flip.
(cd "$root" && bazel build -c opt //:ljm //bench:gen_big >/dev/null 2>&1) || {
  echo "run.sh: bazel build -c opt //:ljm //bench:gen_big failed" >&2
  exit 1
}
bin=$(cd "$root" && bazel info -c opt bazel-bin 2>/dev/null)
ljm=$bin/cli/ljm
[ -x "$ljm" ] || ljm=$bin/ljm
gen=$bin/bench/gen_big

if [ -n "${LJM_BENCH_DIR:-}" ]; then
  dir=$LJM_BENCH_DIR
  mkdir -p "$dir"
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/ljm-bench.XXXXXX")
  trap 'rm -rf "$dir"' EXIT
fi

# -- Streams: 3 M events (big.lua) and ten times longer.
declare -A events
for s in 1 10; do
  f=$dir/big${s}x.ljm
  if [ ! -s "$f" ] || [ ! -s "$f.events" ]; then
    "$gen" --scale "$s" "$f" 2>"$f.gen"
    sed -n 's/^gen_big: \([0-9]*\) events.*/\1/p' "$f.gen" >"$f.events"
  fi
  events[$s]=$(cat "$f.events")
done

# measure CMD... -> "SECONDS RSS_KB": best wall time and highest peak RSS of
# $runs runs; exit status of the last failing run, if any.
measure() {
  local best="" rss=0 t m rc=0
  for ((r = 0; r < runs; r++)); do
    /usr/bin/time -f '%e %M' -o "$dir/time.out" "$@" >/dev/null 2>"$dir/cmd.err" || rc=$?
    read -r t m <"$dir/time.out" || true
    case $t in ''|*[!0-9.]*) t=0; m=0 ;; esac  # killed: no figures
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a<b)}'; then best=$t; fi
    [ "$m" -gt "$rss" ] && rss=$m
  done
  echo "$best $rss"
  return $rc
}

echo "ljm report (default mode), best of $runs"
printf '%-10s %12s %12s %9s %13s %13s\n' stream events bytes seconds "M events/s" "peak RSS MB"
declare -A secs rsskb
for s in 1 10; do
  f=$dir/big${s}x.ljm
  res=$(measure "$ljm" report "$f") || echo "big${s}x: ljm report failed: $(head -n 1 "$dir/cmd.err")"
  read -r secs[$s] rsskb[$s] <<<"$res"
  printf '%-10s %12s %12s %9s %13s %13s\n' "big${s}x" "${events[$s]}" "$(stat -c %s "$f")" \
    "${secs[$s]}" "$(awk -v e="${events[$s]}" -v t="${secs[$s]}" 'BEGIN{printf (t>0 ? "%.2f" : "-"), e/t/1e6}')" \
    "$(awk -v k="${rsskb[$s]}" 'BEGIN{printf "%.1f", k/1024}')"
done
awk -v a="${rsskb[10]}" -v b="${rsskb[1]}" 'BEGIN{printf "peak RSS 10x/1x: %s\n", (b>0 ? sprintf("%.2f", a/b) : "-")}'
echo "targets: >= 15 M events/s, peak RSS <= 32 MB, 10x/1x RSS <= 1.2"

# -- Converters on the 3 M-event stream, against the report's time.
echo
echo "ljm convert -o OUT big1x.ljm, best of $runs (target: <= 1.5x report time)"
printf '%-16s %9s %13s %16s\n' output seconds "peak RSS MB" "convert/report"
# The formats the issues name, plus any other suffix 'ljm convert --help'
# lists (its format table: two spaces, name in 10 columns, suffixes in 34).
suffixes=".txt .pb.gz .heaptrack.gz .heaptrack.zst .folded .svg .md .json"
for s in $("$ljm" convert --help 2>/dev/null |
           awk '/^formats:/ {f = 1; next} f && /^$/ {exit} f {print substr($0, 14, 34)}'); do
  case " $suffixes " in *" $s "*) ;; *) suffixes="$suffixes $s" ;; esac
done
for sfx in $suffixes; do
  out=big$sfx
  if res=$(measure "$ljm" convert -o "$dir/$out" "$dir/big1x.ljm"); then
    read -r t k <<<"$res"
    printf '%-16s %9s %13s %16s\n' "$out" "$t" "$(awk -v k="$k" 'BEGIN{printf "%.1f", k/1024}')" \
      "$(awk -v a="$t" -v b="${secs[1]}" 'BEGIN{printf (b>0 ? "%.2f" : "-"), a/b}')"
  else
    printf '%-16s %s\n' "$out" "n/a (not built: $(head -n 1 "$dir/cmd.err"))"
  fi
  rm -f "$dir/$out"
done
