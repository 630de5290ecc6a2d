#!/usr/bin/env bash
# run.sh -- the decoder/report and converter benchmark (not a test: it
# prints figures, no pass/fail). See bench/README.md for the targets.
#
#   bench/run.sh            streams go to a temporary directory, removed after
#   LJM_BENCH_DIR=DIR bench/run.sh   keep them (and reuse existing ones) in DIR
#   LJM_BENCH_RUNS=N        repetitions per measurement, best one kept (7)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
runs=${LJM_BENCH_RUNS:-7}

# -- Build (optimised). --symlink_prefix=/ leaves the bazel-bin symlink to
# the tree's other (fastbuild) users; Bazel says where the outputs are.
(cd "$root" && bazel build -c opt --symlink_prefix=/ //:ljm //bench:gen_big //bench:bare_pass \
  //bench:replay_pass >/dev/null 2>&1) || {
  echo "run.sh: bazel build -c opt //:ljm //bench:gen_big //bench:bare_pass //bench:replay_pass failed" >&2
  exit 1
}
bin=$(cd "$root" && bazel info -c opt bazel-bin 2>/dev/null)
ljm=$bin/cli/ljm
[ -x "$ljm" ] || ljm=$bin/ljm
gen=$bin/bench/gen_big
bare=$bin/bench/bare_pass
replay=$bin/bench/replay_pass

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

# measure CMD... -> "SECONDS RSS_KB": best wall time (bash's microsecond
# clock: /usr/bin/time's %e has only 10 ms) and highest peak RSS (%M) of
# $runs runs; fails if any run fails.
measure() {
  local best="" rss=0 t0 t1 t m rc=0
  for ((r = 0; r < runs; r++)); do
    t0=$EPOCHREALTIME
    /usr/bin/time -f '%M' -o "$dir/time.out" "$@" >/dev/null 2>"$dir/cmd.err" || rc=$?
    t1=$EPOCHREALTIME
    m=$(tail -n 1 "$dir/time.out")
    case $m in ''|*[!0-9]*) m=0 ;; esac  # killed: no figure
    t=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a < b)}'; then best=$t; fi
    if [ "$m" -gt "$rss" ]; then rss=$m; fi
  done
  echo "$best $rss"
  return $rc
}

# Median of the numbers on stdin.
med() { sort -n | awk '{v[NR] = $1} END {printf "%.3f", v[int((NR + 1) / 2)]}'; }

# measure_pair STREAM CMD... -> "BEST RSS_KB REPORT_BEST MEDIAN REPORT_MEDIAN":
# ljm CMD... and ljm report STREAM run in turn, $runs times each, so that both
# figures come from the same minutes (this VM's speed drifts); fails if CMD does.
measure_pair() {
  local stream=$1 best="" rbest="" rss=0 t0 t1 t m rc=0
  shift
  : >"$dir/pair.c"
  : >"$dir/pair.r"
  for ((r = 0; r < runs; r++)); do
    t0=$EPOCHREALTIME
    /usr/bin/time -f '%M' -o "$dir/time.out" "$ljm" "$@" >/dev/null 2>"$dir/cmd.err" || rc=$?
    t1=$EPOCHREALTIME
    m=$(tail -n 1 "$dir/time.out")
    case $m in ''|*[!0-9]*) m=0 ;; esac
    t=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')
    echo "$t" >>"$dir/pair.c"
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a < b)}'; then best=$t; fi
    if [ "$m" -gt "$rss" ]; then rss=$m; fi
    t0=$EPOCHREALTIME
    "$ljm" report "$stream" >/dev/null 2>&1
    t=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.3f", b - a}')
    echo "$t" >>"$dir/pair.r"
    if [ -z "$rbest" ] || awk -v a="$t" -v b="$rbest" 'BEGIN{exit !(a < b)}'; then rbest=$t; fi
  done
  echo "$best $rss $rbest $(med <"$dir/pair.c") $(med <"$dir/pair.r")"
  return $rc
}

# Context for the figures: a busy machine (load) makes them worthless.
echo "$(date -u '+%F %T UTC'), $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)"
echo "load average at start: $(cut -d ' ' -f 1-3 /proc/loadavg)"
echo
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
read -r tbare kbare <<<"$(measure "$bare" "$dir/big1x.ljm")"
echo "bare pass over big1x (bench/bare_pass.c: every ULEB128 read, nothing else): $tbare s;" \
  "report/bare: $(awk -v a="${secs[1]}" -v b="$tbare" 'BEGIN{printf (b>0 ? "%.2f" : "-"), a/b}')"
# The same ratio from interleaved runs (bare pass, report, bare pass, ...),
# by median: this VM's speed drifts by half within the hour, so two separate
# best-ofs may come from different minutes.
: >"$dir/bare.t"
: >"$dir/report.t"
for ((r = 0; r < 3 * runs; r++)); do
  for which in bare report; do
    t0=$EPOCHREALTIME
    if [ $which = bare ]; then "$bare" "$dir/big1x.ljm" >/dev/null 2>&1
    else "$ljm" report "$dir/big1x.ljm" >/dev/null 2>&1; fi
    awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.4f\n", b - a}' >>"$dir/$which.t"
  done
done
mb=$(med <"$dir/bare.t")
mr=$(med <"$dir/report.t")
echo "interleaved, $((3 * runs)) runs each: medians bare pass $mb s, ljm report $mr s;" \
  "report/bare: $(awk -v a="$mr" -v b="$mb" 'BEGIN{printf (b>0 ? "%.2f" : "-"), a/b}')"
# What report cannot go below: decoding, and replaying the live heap (the
# Overrides and HEAP SUMMARY need every freed block's site).
if fl=$("$replay" "$dir/big1x.ljm" "$runs"); then
  read -r tdec trep <<<"$(sed 's/.*decoder alone \([0-9.]*\) s, live-block replay alone \([0-9.]*\) s.*/\1 \2/' <<<"$fl")"
  echo "floors, best of $runs in one process (bench/replay_pass.c): decoder alone $tdec s," \
    "live-block replay alone $trep s; (decoder + replay)/bare: $(awk -v a="$tdec" -v b="$trep" \
    -v c="$tbare" 'BEGIN{printf (c>0 ? "%.2f" : "-"), (a+b)/c}')"
else
  echo "floors: bench/replay_pass failed"
fi
echo "targets: >= 15 M events/s, peak RSS <= 32 MB, 10x/1x RSS <= 1.2, report/bare <= 2"
if "$ljm" report "$dir/big1x.ljm" 2>/dev/null | cmp -s - "$root/testdata/v3/big.txt"; then
  echo "ljm report big1x.ljm is identical to testdata/v3/big.txt"
else
  echo "ljm report big1x.ljm differs from testdata/v3/big.txt"
fi

# -- The extended stream (ljm record --stacks shape) against its downgrade,
# which is big1x.ljm byte for byte.
fx=$dir/big1x-stacks.ljm
[ -s "$fx" ] || "$gen" --stacks --scale 1 "$fx" 2>/dev/null
echo
echo "extended stream (stacks, time, RSS) vs its downgrade (big1x), best of $runs"
printf '%-32s %9s %13s %10s\n' command seconds "peak RSS MB" "ext/std"
for cmd in "report" "convert -o OUT.pb.gz" "convert -o OUT.heaptrack.zst" "convert -o OUT.folded"; do
  read -r ts ks <<<"$(measure "$ljm" ${cmd//OUT/$dir/std} "$dir/big1x.ljm")"
  read -r tx kx <<<"$(measure "$ljm" ${cmd//OUT/$dir/ext} "$fx")"
  printf '%-32s %9s %13s %10s\n' "$cmd (std)" "$ts" "$(awk -v k="$ks" 'BEGIN{printf "%.1f", k/1024}')" ""
  printf '%-32s %9s %13s %10s\n' "$cmd (ext)" "$tx" "$(awk -v k="$kx" 'BEGIN{printf "%.1f", k/1024}')" \
    "$(awk -v a="$tx" -v b="$ts" 'BEGIN{printf (b>0 ? "%.2f" : "-"), a/b}')"
done
rm -f "$dir"/std.* "$dir"/ext.*
echo "stream bytes ext/std: $(awk -v a="$(stat -c %s "$fx")" -v b="$(stat -c %s "$dir/big1x.ljm")" 'BEGIN{printf "%.3f", a/b}')"
echo "targets: ljm report ext/std <= 1.3"

# -- Converters on the 3 M-event stream, against the report's time.
echo
echo "ljm convert -o OUT big1x.ljm against ljm report big1x.ljm, $runs runs each, interleaved"
echo "(convert, report, convert, ...: the two ratios are of the best and of the median runs;"
echo "target: <= 1.5x report time)"
printf '%-24s %9s %13s %9s %9s %12s\n' output seconds "peak RSS MB" "best" "median" "out bytes"
# The formats benchmarked by name, plus any other suffix 'ljm convert --help'
# lists (its format table: two spaces, name in 11 columns, suffixes in 34).
suffixes=".txt .pb.gz .heaptrack.gz .heaptrack.zst .folded .svg .md .json"
for s in $("$ljm" convert --help 2>/dev/null |
           awk '/^formats:/ {f = 1; next} f && /^$/ {exit} f {print substr($0, 15, 34)}'); do
  case " $suffixes " in *" $s "*) ;; *) suffixes="$suffixes $s" ;; esac
done
for sfx in $suffixes; do
  out=big$sfx
  if res=$(measure_pair "$dir/big1x.ljm" convert -o "$dir/$out" "$dir/big1x.ljm"); then
    read -r t k rb cm rm <<<"$res"
    printf '%-24s %9s %13s %9s %9s %12s\n' "$out" "$t" "$(awk -v k="$k" 'BEGIN{printf "%.1f", k/1024}')" \
      "$(awk -v a="$t" -v b="$rb" 'BEGIN{printf (b>0 ? "%.2f" : "-"), a/b}')" \
      "$(awk -v a="$cm" -v b="$rm" 'BEGIN{printf (b>0 ? "%.2f" : "-"), a/b}')" \
      "$(stat -c %s "$dir/$out" 2>/dev/null || echo -)"
  else
    printf '%-24s %s\n' "$out" "n/a (not built: $(head -n 1 "$dir/cmd.err"))"
  fi
  rm -f "$dir/$out"
done
echo
echo "load average at end: $(cut -d ' ' -f 1-3 /proc/loadavg)"
