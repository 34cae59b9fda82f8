#!/bin/sh
# Builds everything the GPU run needs and lays it out in one folder that runs
# on another x86-64 Linux machine with a GPU, whether or not that machine has
# the Debian packages archfit builds against:
#
#   tests/gpu/pack.sh [BUILD_DIR [PACK_DIR]]     (defaults build-gpu, build-gpu-pack)
#   tests/gpu/pack.sh --from-build BUILD_DIR PACK_DIR    (a build made already, not rebuilt)
#   ARCHFIT_GPU_PACK=build-gpu-pack tests/gpu/run.sh     (there: no build, no packages)
#
# PACK_DIR/bin        the GPU tests and the NVRTC-vs-nvcc kernel speed bench
# PACK_DIR/fatbins    the nvcc images those programs load
# PACK_DIR/prefix     the installed SDK (runtime, development, and the imagegen_ops
#                     plugin), for the samples and the torch extension
# PACK_DIR/deps       every shared library those need beyond the C and C++ runtimes
#                     (yaml-cpp, zstd, libzip, libcudart, ...), found with ldd
# PACK_DIR/PACKED     what was packed: from which commit and kernels/ (digest),
#                     needing which glibc
#
# tests/gpu/run.sh packs into its build folder and runs from there, so this
# layout is what every GPU run uses, here and on a lent machine.
set -eu
cd "$(dirname "$0")/../.."
build=yes
if [ "${1:-}" = --from-build ]; then
  build=no
  shift
  [ $# -eq 2 ] || { echo "usage: tests/gpu/pack.sh --from-build BUILD_DIR PACK_DIR" >&2; exit 2; }
fi
BUILD_DIR="${1:-build-gpu}"
PACK_DIR="${2:-build-gpu-pack}"

if [ "$build" = yes ]; then
  # No libtorch: the GPU programs and the samples need only the SDK and its
  # imagegen_ops plugin (the torch adapter's GPU test builds against the
  # torch it finds on the GPU machine, tests/gpu/torch_adapter_cuda.py).
  CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}" cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DARCHFIT_WITH_TORCH=OFF >/dev/null
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target archfit_gpu_tests archfit_kernel_speed_bench \
    archfit archfit_cli archfit_imagegen_ops
fi
for program in archfit_gpu_tests archfit_kernel_speed_bench; do
  [ -x "$BUILD_DIR/tests/gpu/$program" ] ||
    { echo "pack.sh: $BUILD_DIR/tests/gpu/$program is not built" >&2; exit 1; }
done

rm -rf "$PACK_DIR"
mkdir -p "$PACK_DIR/bin" "$PACK_DIR/fatbins" "$PACK_DIR/deps"
PACK_DIR=$(cd "$PACK_DIR" && pwd)  # ldd below names what it finds by this path
cp "$BUILD_DIR/tests/gpu/archfit_gpu_tests" "$BUILD_DIR/tests/gpu/archfit_kernel_speed_bench" \
  "$PACK_DIR/bin/"
cp "$BUILD_DIR"/tests/gpu/*.fatbin "$PACK_DIR/fatbins/"
for component in runtime development plugins; do
  cmake --install "$BUILD_DIR" --prefix "$PACK_DIR/prefix" --component "$component" >/dev/null
done
# tests/gpu/run.sh puts prefix/lib on the library path: the install must use it.
[ -d "$PACK_DIR/prefix/lib/archfit/plugins/imagegen_ops" ] ||
  { echo "pack.sh: $BUILD_DIR installed no $PACK_DIR/prefix/lib/archfit/plugins/imagegen_ops" >&2; exit 1; }
# imagegen_ops alone: the GPU programs, the samples and the torch extension
# use it; torch_probe, where the build has it, would bring a libtorch along
# (hundreds of MB) that the GPU machine has its own of.
for plugin in "$PACK_DIR"/prefix/lib/archfit/plugins/*; do
  [ "$(basename "$plugin")" = imagegen_ops ] || rm -rf "$plugin"
done

# The libraries every Linux machine with a C++ toolchain has are left to that
# machine (carrying an older libstdc++ would shadow a newer one the samples
# built there need). libcuda is the driver's and is loaded at run time.
is_system_runtime() {
  case "$1" in
    libc.so.*|libm.so.*|libdl.so.*|librt.so.*|libpthread.so.*|ld-linux*|linux-vdso*|\
    libstdc++.so.*|libgcc_s.so.*|libcuda.so.*) return 0 ;;
  esac
  return 1
}
# Every ELF file in the pack, its libarchfit and plugins included; ldd lists
# what each needs transitively, resolved as the build machine resolves it.
# The pack's own libarchfit is found through LD_LIBRARY_PATH on the GPU
# machine, so it is never copied into deps.
elves=$(find "$PACK_DIR/bin" "$PACK_DIR/prefix" -type f \( -perm -u+x -o -name '*.so*' \))
for elf in $elves; do
  ldd "$elf" 2>/dev/null | while read -r name arrow path rest; do
    [ "$arrow" = "=>" ] || continue
    case "$path" in /*) ;; *) echo "pack.sh: $elf needs $name, which this machine cannot find" >&2
                             exit 1 ;; esac
    is_system_runtime "$name" && continue
    case "$name" in libarchfit.so*) continue ;; esac
    [ -e "$PACK_DIR/deps/$name" ] || cp -L "$path" "$PACK_DIR/deps/$name"
  done
done

# The pack must stand alone: with only its own folders on the library path,
# everything its files need resolves into the pack or to the system runtime.
for elf in $elves; do
  LD_LIBRARY_PATH="$PACK_DIR/prefix/lib:$PACK_DIR/deps" ldd "$elf" 2>/dev/null |
    while read -r name arrow path rest; do
      [ "$arrow" = "=>" ] || continue
      is_system_runtime "$name" && continue
      case "$path" in "$PACK_DIR"/*) ;; *)
        echo "pack.sh: $elf needs $name from $path, outside the pack" >&2; exit 1 ;; esac
    done
done

# The newest glibc symbol version anything in the pack asks for: the GPU
# machine's glibc must be at least that (run.sh checks before it starts).
glibc_needed=$(for elf in $elves "$PACK_DIR"/deps/*; do
                 objdump -T "$elf" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' || true
               done | sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n -k3,3n -u | tail -n 1)
{
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' with uncommitted changes')"
  echo "packed $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m) with $(ldd --version | head -n 1)"
  echo "needs glibc ${glibc_needed:-unknown}"
  echo "kernels $(tests/gpu/kernels_digest.sh)"
  echo "deps $(ls "$PACK_DIR/deps" | tr '\n' ' ')"
} >"$PACK_DIR/PACKED"
echo "packed $(du -sh "$PACK_DIR" | cut -f1) in $PACK_DIR:"
sed 's/^/  /' "$PACK_DIR/PACKED"
