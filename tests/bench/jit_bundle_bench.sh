#!/bin/bash
# `archfit jit bundle` for 4 archs: one compile at a time (--jobs 1) against
# two at once (--jobs 2), each run with an empty private cache so that every
# arch is really compiled; runs of the two kinds alternate (issue 4, "Speed":
# at least 1.7x faster on 2 cores). Prints each run and the medians.
#
#   tests/bench/jit_bundle_bench.sh ARCHFIT [RUNS] [SOURCE] [ARCHS]
set -euo pipefail
archfit=${1:?usage: jit_bundle_bench.sh path/to/archfit [runs] [source.cu] [archs]}
runs=${2:-7}
source=${3:-$(dirname "$0")/../../kernels/rmsnorm.cu}
archs=${4:-sm_80,sm_90,sm_100,sm_120}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

one_run() {  # jobs -> seconds
  rm -rf "$work/cache"
  local start end
  start=$(date +%s.%N)
  ARCHFIT_CACHE_DIR="$work/cache" "$archfit" jit bundle "$source" --arch "$archs" \
    -o "$work/out.fatbin" --jobs "$1" >/dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { print b - a }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "archfit jit bundle $(basename "$source") --arch $archs, $runs runs each, $(nproc) cores"
one=() two=()
for ((i = 0; i < runs; i++)); do
  one+=("$(one_run 1)")
  two+=("$(one_run 2)")
  printf 'run %d: --jobs 1 %.3f s   --jobs 2 %.3f s\n' "$i" "${one[-1]}" "${two[-1]}"
done
m1=$(printf '%s\n' "${one[@]}" | median)
m2=$(printf '%s\n' "${two[@]}" | median)
printf 'median: --jobs 1 %.3f s, --jobs 2 %.3f s, speed-up %.2fx (target >= 1.7x)\n' \
  "$m1" "$m2" "$(awk -v a="$m1" -v b="$m2" 'BEGIN { print a / b }')"
