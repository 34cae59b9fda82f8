#!/bin/sh
# Everything that needs a GPU, in one command (a few minutes on a machine
# with one): the GPU tests (kernel modules through prebuilt SASS, driver PTX
# JIT and NVRTC, checked against the CPU references), the NVRTC-vs-nvcc
# kernel speed bench, the samples built against an installed SDK and run on
# the GPU, and the libtorch adapter's CUDA path in a torch extension.
#
#   tests/gpu/run.sh [gtest flags]              builds (tests/gpu/pack.sh), then runs
#   ARCHFIT_GPU_PACK=DIR tests/gpu/run.sh       runs a pack built elsewhere: no build,
#                                               no Debian packages needed here
#
# Where nvidia-smi lists a GPU (or ARCHFIT_GPU_REQUIRED=1), a step that
# skips for want of a GPU is a failure: a driver the programs cannot reach
# must not pass as a clean run. Elsewhere every GPU step skips, saying why.
# ARCHFIT_GPU_REQUIRED=0 turns that off.
# Exit status: the GPU tests', else the samples', else the torch adapter's.
set -eu
caller="$PWD"
cd "$(dirname "$0")/../.."
repo="$PWD"
if [ -n "${ARCHFIT_GPU_PACK:-}" ]; then
  pack=$(cd "$caller" && cd "$ARCHFIT_GPU_PACK" && pwd)
  [ -f "$pack/PACKED" ] || { echo "run.sh: $ARCHFIT_GPU_PACK is not a pack (no PACKED file; tests/gpu/pack.sh makes one)" >&2; exit 2; }
  scratch="${TMPDIR:-/tmp}/archfit-gpu-run"
else
  BUILD_DIR="${BUILD_DIR:-build-gpu}"
  tests/gpu/pack.sh "$BUILD_DIR" "$BUILD_DIR/pack"
  pack=$(cd "$BUILD_DIR/pack" && pwd)
  scratch=$(cd "$BUILD_DIR" && pwd)
fi
sed 's/^/pack: /' "$pack/PACKED"
# A pack copied between machines may arrive without its x bits.
chmod u+x "$pack"/bin/* "$pack"/prefix/bin/* 2>/dev/null || true

# The kernels' sources are read from this checkout; the pack's fatbins were
# built from the sources it was packed with. Both must be the same.
packed_kernels=$(sed -n 's/^kernels //p' "$pack/PACKED")
here_kernels=$(sh tests/gpu/kernels_digest.sh)  # sh: a copied checkout may lose the x bit
if [ "$packed_kernels" != "$here_kernels" ]; then
  echo "run.sh: kernels/ here ($here_kernels) is not what the pack was built from ($packed_kernels): pack again at this checkout (tests/gpu/pack.sh)" >&2
  exit 2
fi

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
required="${ARCHFIT_GPU_REQUIRED:-}"
if [ -z "$required" ]; then
  required=0
  nvidia-smi -L 2>/dev/null | grep -q '^GPU 0' && required=1
fi
[ "$required" = 1 ] && echo "a GPU is here: a step that skips for want of one fails"
# `fail_if_skipped LOG PATTERN`: returns 1 where a GPU is required and LOG
# shows a step that skipped (PATTERN), naming it.
fail_if_skipped() {
  [ "$required" = 1 ] || return 0
  if grep -qiE "$2" "$1"; then
    echo "run.sh: skipped though a GPU is here: $(grep -iE "$2" "$1" | head -n 3 | tr '\n' ' ')" >&2
    return 1
  fi
  return 0
}
mkdir -p "$scratch"
log="$scratch/run-logs"
rm -rf "$log" && mkdir -p "$log"

status=0
"$pack/bin/archfit_gpu_tests" "$@" >"$log/gpu_tests" 2>&1 || status=$?
cat "$log/gpu_tests"
fail_if_skipped "$log/gpu_tests" '^\[  SKIPPED \] [A-Za-z]' || status=1

echo "== kernel speed: NVRTC build vs nvcc build"
"$pack/bin/archfit_kernel_speed_bench" || echo "the speed bench failed ($?)"

# The samples build with Ninja where the machine has it: not every GPU
# machine has make.
generator=""
command -v ninja >/dev/null && generator="-GNinja"
echo "== samples, against the SDK installed in $pack/prefix"
samples=0
# Fresh each run: a build folder left by a checkout elsewhere would refuse this one.
rm -rf "$scratch/sample_custom_op" "$scratch/sample_host"
for sample in custom_op host; do
  cmake $generator -S "samples/$sample" -B "$scratch/sample_$sample" -DCMAKE_PREFIX_PATH="$pack/prefix" \
    >"$log/configure_$sample" 2>&1 && cmake --build "$scratch/sample_$sample" >"$log/build_$sample" 2>&1 ||
    { cat "$log/configure_$sample" "$log/build_$sample" 2>/dev/null; echo "run.sh: samples/$sample did not build" >&2; samples=1; }
done
if [ -x "$scratch/sample_custom_op/test_adaln" ]; then
  ctest --test-dir "$scratch/sample_custom_op" --output-on-failure -V >"$log/custom_op" 2>&1 || samples=1
  grep -E "^[0-9]+: |tests passed|tests failed" "$log/custom_op" || true
  fail_if_skipped "$log/custom_op" '\*\*\*Skipped|^[0-9]+: skipped' || samples=1
fi
if [ -x "$scratch/sample_host/archfit_host" ]; then
  "$scratch/sample_host/archfit_host" >"$log/host" 2>&1 || samples=1
  cat "$log/host"
  # The host sample prints what it did and exits 0 either way: with a GPU,
  # the kernel must have run and matched the CPU.
  if [ "$required" = 1 ] &&
     ! awk '/^kernel   rmsnorm_f32 ran on / { ran = 1; if ($NF + 0 > 1e-4) bad = 1 }
            END { exit !(ran && !bad) }' "$log/host"; then
    echo "run.sh: samples/host did not run RMSNorm on the GPU within 1e-4 of the CPU" >&2
    samples=1
  fi
fi

echo "== the libtorch adapter's CUDA path, in a torch extension"
torch_status=0
torch_flags=""
[ "$required" = 1 ] && torch_flags="--require-gpu"
# torch's extension builder finds the toolkit through CUDA_HOME or nvcc.
cuda_home="${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")}"
CUDA_HOME="$cuda_home" TORCH_EXTENSIONS_DIR="$scratch/torch_extensions" ARCHFIT_PREFIX="$pack/prefix" \
  "${ARCHFIT_GPU_PYTHON:-python3}" tests/gpu/torch_adapter_cuda.py $torch_flags || torch_status=$?
# 77: no torch, or no torch with CUDA (or, where no GPU is required, no GPU); it has said which.
[ "$torch_status" -eq 77 ] && torch_status=0

[ "$status" -ne 0 ] && exit "$status"
[ "$samples" -ne 0 ] && exit "$samples"
exit "$torch_status"
