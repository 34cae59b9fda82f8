#!/bin/bash
# What the fleet recipes cost a node (docs/fleet.md, "Figures"): `archfit
# check --labels nfd` with 0, 1 and 3 environments, the Slurm prolog with a
# fake scontrol (tests/python/test_slurm_real.py times it under a real one), and a node's first compile with and without a shared
# read-only kernel cache. Medians of 21 runs; the GPU is named, so a real
# driver's start is not in them.
#
#   tests/bench/fleet_bench.sh ARCHFIT DEMO_SITE
#     ARCHFIT    build/sdk/archfit
#     DEMO_SITE  build/tests/fixtures/demo/site-packages (make demo builds it)
set -u
ARCHFIT=$(realpath "${1:?usage: fleet_bench.sh ARCHFIT DEMO_SITE}")
SITE=$(realpath "${2:?usage: fleet_bench.sh ARCHFIT DEMO_SITE}")
REPO=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
microseconds() {
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s%N)
  echo $(((end - start) / 1000))
}
measure() {
  local name=$1
  shift
  for _ in $(seq 21); do microseconds "$@"; done | median |
    awk -v name="$name" '{printf "%-62s %.1f ms\n", name, $1 / 1000}'
}

printf 'schema: archfit.fleet/1\nenvironments:\n  - name: demo\n    site_packages: %s\n' "$SITE" \
  >"$WORK/one.yaml"
cp "$WORK/one.yaml" "$WORK/three.yaml"
for n in 2 3; do printf '  - name: demo%s\n    site_packages: %s\n' "$n" "$SITE" >>"$WORK/three.yaml"; done
export ARCHFIT_CACHE_DIR="$WORK/cache"
node=(--gpu "RTX 5090" --driver 580.65.06)
"$ARCHFIT" check --labels nfd --labels-config "$WORK/three.yaml" "${node[@]}" >/dev/null  # warm
measure "labels: node only" "$ARCHFIT" check --labels nfd "${node[@]}"
measure "labels: 1 environment" "$ARCHFIT" check --labels nfd --labels-config "$WORK/one.yaml" "${node[@]}"
measure "labels: 3 environments" "$ARCHFIT" check --labels nfd --labels-config "$WORK/three.yaml" "${node[@]}"
measure "labels: 3 environments, written with --labels-ttl" "$ARCHFIT" check --labels nfd \
  --labels-config "$WORK/three.yaml" "${node[@]}" --labels-output "$WORK/archfit" --labels-ttl 900

printf '#!/bin/sh\nexit 0\n' >"$WORK/scontrol"
chmod +x "$WORK/scontrol"
# The prolog's settings come from its one file (samples/slurm/slurm-prolog.conf).
prolog_config() {
  printf 'ARCHFIT=%q\nSCONTROL=%q\nSCANCEL=%q\nARCHFIT_ALLOWED_ROOTS=(%q)\nARCHFIT_CHECK_ARGS=(--gpu %q --driver 580.65.06)\n' \
    "$ARCHFIT" "$WORK/scontrol" "$WORK/scontrol" "$(dirname "$(dirname "$SITE")")" "$1" >"$WORK/prolog.conf"
}
export ARCHFIT_PROLOG_CONFIG="$WORK/prolog.conf" SLURM_JOB_ID=1 SLURMD_NODENAME=bench
export SLURM_JOB_COMMENT="archfit=$SITE"
prolog_config sm_90
measure "prolog: fits (the job starts)" bash "$REPO/samples/slurm/prolog.sh"
prolog_config sm_120
measure "prolog: does not fit (the job is held)" bash "$REPO/samples/slurm/prolog.sh"
SLURM_JOB_COMMENT="nothing" measure "prolog: the job names no environment" bash "$REPO/samples/slurm/prolog.sh"

# A node of sm_120 with an empty primary of its own, the bundle's cache shared.
ARCHFIT_CACHE_DIR="$WORK/shared" "$ARCHFIT" jit bundle "$REPO/kernels/rmsnorm.cu" \
  --arch sm_89,sm_120 -o "$WORK/rmsnorm.fatbin" >/dev/null
mkdir -p "$WORK/empty"
first_compile() {
  rm -rf "$WORK/node"
  ARCHFIT_CACHE_DIR="$WORK/node" ARCHFIT_CACHE_READONLY_DIRS="$1" \
    "$ARCHFIT" jit compile "$REPO/kernels/rmsnorm.cu" --arch sm_120
}
first_compile "$WORK/shared" | grep -E "^path|^time"
measure "a node's first compile of rmsnorm sm_120, shared cache" first_compile "$WORK/shared"
measure "a node's first compile of rmsnorm sm_120, no shared cache" first_compile "$WORK/empty"
