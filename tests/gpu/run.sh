#!/bin/sh
# Everything that needs a GPU, in one command (a few minutes on a machine
# with one): the GPU tests (kernel modules through prebuilt SASS, driver PTX
# JIT and NVRTC, checked against the CPU references), the NVRTC-vs-nvcc
# kernel speed bench, the samples built against an installed SDK and run on
# the GPU, and the libtorch adapter's CUDA path in a torch extension.
# Without a GPU every test skips, saying so, and the bench says it has
# nothing to time.
#
#   tests/gpu/run.sh [gtest flags]              builds (tests/gpu/pack.sh), then runs
#   ARCHFIT_GPU_PACK=DIR tests/gpu/run.sh       runs a pack built elsewhere: no build,
#                                               no Debian packages needed here
#
# Exit status: the GPU tests', else the samples', else the torch adapter's.
set -eu
cd "$(dirname "$0")/../.."
repo="$PWD"
if [ -n "${ARCHFIT_GPU_PACK:-}" ]; then
  pack=$(cd "$ARCHFIT_GPU_PACK" && pwd)
  [ -f "$pack/PACKED" ] || { echo "run.sh: $ARCHFIT_GPU_PACK is not a pack (no PACKED file; tests/gpu/pack.sh makes one)" >&2; exit 2; }
  scratch="${TMPDIR:-/tmp}/archfit-gpu-run"
else
  BUILD_DIR="${BUILD_DIR:-build-gpu}"
  tests/gpu/pack.sh "$BUILD_DIR" "$BUILD_DIR/pack" >/dev/null
  pack="$repo/$BUILD_DIR/pack"
  scratch="$repo/$BUILD_DIR"
fi
sed 's/^/pack: /' "$pack/PACKED"

# A pack needs a glibc at least as new as the one it was built with asks for.
needed=$(sed -n 's/^needs glibc //p' "$pack/PACKED")
have=$(ldd --version 2>/dev/null | head -n 1 | grep -o '[0-9][0-9.]*$' || echo unknown)
if [ "$needed" != unknown ] && [ "$have" != unknown ] &&
   [ "$(printf '%s\n%s\n' "$needed" "$have" | sort -t. -k1,1n -k2,2n | tail -n 1)" != "$have" ]; then
  echo "run.sh: this machine's glibc is $have; the pack needs $needed: build it here (tests/gpu/run.sh without ARCHFIT_GPU_PACK)" >&2
  exit 2
fi

# The pack's libarchfit comes first. Of its deps, only those this machine
# lacks are put on the path: a library the machine has (libz, libcrypto, ...)
# stays the machine's own, so the compilers, cmake and python run below load
# what they were built with.
missing="$scratch/pack-libs"
rm -rf "$missing" && mkdir -p "$missing"
ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)  # /sbin is not on every PATH
known=$("$ldconfig" -p 2>/dev/null || true)
for lib in "$pack"/deps/*; do
  [ -e "$lib" ] || continue
  printf '%s\n' "$known" | grep -q "^[[:space:]]*$(basename "$lib") " || ln -s "$lib" "$missing/"
done
export LD_LIBRARY_PATH="$pack/prefix/lib:$missing${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# What the pack's files cannot load here ("not found", or a symbol version
# the machine's copy lacks), as ldd reports it.
unresolved() {
  find "$pack/bin" "$pack/prefix" -type f \( -perm -u+x -o -name '*.so*' \) | while read -r elf; do
    ldd "$elf" 2>&1 | grep "not found" | sed "s|^|  $elf: |" || true
  done
}
problems=$(unresolved)
if [ -n "$problems" ]; then
  # A machine's own copy older than the pack's: take every dep from the pack.
  rm -f "$missing"/* && ln -s "$pack"/deps/* "$missing/"
  problems=$(unresolved)
  [ -z "$problems" ] || { printf 'run.sh: the pack cannot load here:\n%s\n' "$problems" >&2; exit 2; }
fi
echo "pack: libraries taken from the pack: $(ls "$missing" | tr '\n' ' ')"
# Its programs read the kernels' sources from this checkout and the nvcc
# images from the pack.
export ARCHFIT_GPU_KERNELS_DIR="$repo/kernels"
export ARCHFIT_GPU_FATBIN_DIR="$pack/fatbins"
unset ARCHFIT_PLUGIN_PATH  # the installed SDK's own plugin folder is the one under test
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv 2>/dev/null || echo "nvidia-smi: not available"

status=0
"$pack/bin/archfit_gpu_tests" "$@" || status=$?

echo "== kernel speed: NVRTC build vs nvcc build"
"$pack/bin/archfit_kernel_speed_bench" || echo "the speed bench failed ($?)"

echo "== samples, against the SDK installed in $pack/prefix"
samples=0
# Fresh each run: a build folder left by a checkout elsewhere would refuse this one.
rm -rf "$scratch/sample_custom_op" "$scratch/sample_host"
mkdir -p "$scratch"
cmake -S samples/custom_op -B "$scratch/sample_custom_op" -DCMAKE_PREFIX_PATH="$pack/prefix" >/dev/null &&
  cmake --build "$scratch/sample_custom_op" >/dev/null &&
  ctest --test-dir "$scratch/sample_custom_op" --output-on-failure -V | grep -E "^[0-9]+: |tests passed" ||
  samples=1
cmake -S samples/host -B "$scratch/sample_host" -DCMAKE_PREFIX_PATH="$pack/prefix" >/dev/null &&
  cmake --build "$scratch/sample_host" >/dev/null &&
  "$scratch/sample_host/archfit_host" || samples=1

echo "== the libtorch adapter's CUDA path, in a torch extension"
torch_status=0
TORCH_EXTENSIONS_DIR="$scratch/torch_extensions" ARCHFIT_PREFIX="$pack/prefix" \
  "${ARCHFIT_GPU_PYTHON:-python3}" tests/gpu/torch_adapter_cuda.py || torch_status=$?
# 77: no torch with CUDA, or no GPU; it has said which.
[ "$torch_status" -eq 77 ] && torch_status=0

[ "$status" -ne 0 ] && exit "$status"
[ "$samples" -ne 0 ] && exit "$samples"
exit "$torch_status"
