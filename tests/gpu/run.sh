#!/bin/sh
# Everything that needs a GPU, in one command (a few minutes on a machine
# with one): the GPU tests (kernel modules through prebuilt SASS, driver PTX
# JIT and NVRTC, checked against the CPU references), the NVRTC-vs-nvcc
# kernel speed bench, and the samples built against an installed SDK and
# run on the GPU. Without a GPU every test skips, saying so, and the bench
# says it has nothing to time. Exit status: the GPU tests', else the samples'.
set -eu
cd "$(dirname "$0")/../.."
BUILD_DIR="${BUILD_DIR:-build-gpu}"
# No libtorch here: the samples need only the SDK and its imagegen_ops plugin.
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}" cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
  -DARCHFIT_WITH_TORCH=OFF >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target archfit_gpu_tests archfit_kernel_speed_bench \
  archfit archfit_cli archfit_imagegen_ops
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv 2>/dev/null || echo "nvidia-smi: not available"

status=0
"$BUILD_DIR/tests/gpu/archfit_gpu_tests" "$@" || status=$?

echo "== kernel speed: NVRTC build vs nvcc build"
"$BUILD_DIR/tests/gpu/archfit_kernel_speed_bench" || echo "the speed bench failed ($?)"

echo "== samples, against the SDK installed in $BUILD_DIR/prefix"
prefix="$PWD/$BUILD_DIR/prefix"
rm -rf "$prefix"
for component in runtime development plugins; do
  cmake --install "$BUILD_DIR" --prefix "$prefix" --component "$component" >/dev/null
done
samples=0
cmake -S samples/custom_op -B "$BUILD_DIR/sample_custom_op" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null &&
  cmake --build "$BUILD_DIR/sample_custom_op" >/dev/null &&
  ctest --test-dir "$BUILD_DIR/sample_custom_op" --output-on-failure -V | grep -E "^[0-9]+: |tests passed" ||
  samples=1
cmake -S samples/host -B "$BUILD_DIR/sample_host" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null &&
  cmake --build "$BUILD_DIR/sample_host" >/dev/null &&
  env -u ARCHFIT_PLUGIN_PATH "$BUILD_DIR/sample_host/archfit_host" || samples=1
[ "$status" -ne 0 ] && exit "$status"
exit "$samples"
