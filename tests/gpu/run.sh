#!/bin/sh
# Builds and runs the GPU tests in one command (under 5 minutes on a machine
# with a GPU): kernel modules through prebuilt SASS, driver PTX JIT and NVRTC,
# checked against the CPU reference. Without a GPU every test skips, saying so.
set -eu
cd "$(dirname "$0")/../.."
BUILD_DIR="${BUILD_DIR:-build-gpu}"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}" cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target archfit_gpu_tests
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv 2>/dev/null || echo "nvidia-smi: not available"
exec "$BUILD_DIR/tests/gpu/archfit_gpu_tests" "$@"
