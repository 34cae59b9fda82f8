#!/bin/sh
# Runs every fuzz target for SECONDS each (make fuzz; CI: 30), from its seeds
# (archfit_fuzz_seeds) and the corpus earlier runs grew, FUZZ_JOBS targets at
# a time (default: one per core), and prints one line per target:
# executions, corpus size, crashes. A crash, leak, timeout (10 s for one
# input) or single allocation over 2 GiB is kept under
# <build>/fuzz/crashes/<target>/; copy it into tests/fuzz/regressions/<target>/
# once fixed, and ctest replays it. Exit status: 1 when any target crashed.
#
#   tests/fuzz/run_fuzzers.sh BUILD_DIR SECONDS [TARGET ...]
set -u
build="$1"
seconds="$2"
shift 2
targets="${*:-scanner pe kb error_text manifest cache_entry wheel}"
jobs="${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}"
work="$build/fuzz"
"$build/tests/fuzz/archfit_fuzz_seeds" "$work/seeds" || exit 2
mkdir -p "$work/logs" && rm -f "$work/logs/"*.result

# fuzz_one TARGET: one libFuzzer run; its counts go to $work/logs/TARGET.result.
fuzz_one() {
  target="$1"
  mkdir -p "$work/corpus/$target" "$work/crashes/$target"
  log="$work/logs/$target.log"
  before=$(ls "$work/crashes/$target" | wc -l)
  # The error-text reader runs on a 256 KB main stack (issue 34: hosts call
  # it on threads with small stacks), so an input that recurses per
  # character is a crash here, not in someone's ComfyUI. Its subshell only.
  [ "$target" = error_text ] && ulimit -s 256
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" "$build/tests/fuzz/archfit_fuzz_$target" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
    -max_len=262144 -print_final_stats=1 -artifact_prefix="$work/crashes/$target/" \
    "$work/corpus/$target" "$work/seeds/$target" >"$log" 2>&1
  after=$(ls "$work/crashes/$target" | wc -l)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  corpus=$(ls "$work/corpus/$target" | wc -l)
  # No final stats ("?"): libFuzzer itself died, a crash it could not report.
  echo "${runs:-?} $corpus $((after - before))" >"$work/logs/$target.result"
}

running=0
for target in $targets; do
  fuzz_one "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait
    running=0
  fi
done
wait

status=0
printf '%-12s %12s %8s %8s  %s\n' target executions corpus crashes "seconds each: $seconds, $jobs at a time"
for target in $targets; do
  read -r runs corpus crashes <"$work/logs/$target.result"
  printf '%-12s %12s %8s %8s\n' "$target" "$runs" "$corpus" "$crashes"
  if [ "$crashes" -ne 0 ] || [ "$runs" = "?" ]; then
    status=1
    echo "  $target: see $work/logs/$target.log and $work/crashes/$target/"
    grep -m 3 -E "ERROR: |SUMMARY: |runtime error" "$work/logs/$target.log" | sed 's/^/    /'
  fi
done
exit "$status"
