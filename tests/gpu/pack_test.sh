#!/bin/sh
# ctest gpu.pack: packs this build (tests/gpu/pack.sh --from-build) and runs
# the pack as a GPU machine without the build would (ARCHFIT_GPU_PACK).
# pack.sh fails if anything in the pack needs a library from outside it;
# here the run must start every program from the pack, build both samples
# against its SDK and finish with exit 0 (without a GPU: everything that
# needs one skips, saying so).
#
#   tests/gpu/pack_test.sh BUILD_DIR WORK_DIR
set -eu
build_dir="$1"
work_dir="$2"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$work_dir"
mkdir -p "$work_dir"
"$repo/tests/gpu/pack.sh" --from-build "$build_dir" "$work_dir/pack"
status=0
TMPDIR="$work_dir" ARCHFIT_GPU_PACK="$work_dir/pack" "$repo/tests/gpu/run.sh" >"$work_dir/run.log" 2>&1 ||
  status=$?
cat "$work_dir/run.log"
[ "$status" -eq 0 ] || { echo "pack_test: run.sh exited $status" >&2; exit 1; }
for expected in "^pack: needs glibc [0-9]" "^== samples, against the SDK installed in $work_dir/pack/prefix" \
                "^100% tests passed" "^plugin   imagegen_ops [0-9.]*: 4 kernel module" \
                "^torch adapter CUDA path: "; do
  grep -q "$expected" "$work_dir/run.log" || { echo "pack_test: run.sh did not print /$expected/" >&2; exit 1; }
done
echo "pack_test: the pack ran"
