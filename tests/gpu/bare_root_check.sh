#!/bin/sh
# Runs a pack (tests/gpu/pack.sh) the way a GPU machine without archfit's
# build dependencies would: inside a minimal Debian 12 root that has only
# cmake, a C/C++ compiler, ninja and python3, with the CUDA toolkit bound in from
# this machine; ninja and no make, like a GPU image with pip's cmake and
# ninja. It catches a pack that leans on a library or header only
# the build machine has, before a GPU machine's minutes are spent on it.
# Without a GPU, the run's GPU steps skip, as they do here.
#
#   tests/gpu/bare_root_check.sh [PACK_DIR [ROOT_DIR]]
#       (defaults build-gpu-pack, build-gpu-bare-root)
#
# Needs root (chroot, mount namespaces) and, the first time, debootstrap
# and a Debian mirror (apt's). The root is made once (about 3 minutes and
# 700 MB) and kept; the checkout and the pack are copied in on every run.
set -eu
cd "$(dirname "$0")/../.."
PACK_DIR="${1:-build-gpu-pack}"
ROOT_DIR="${2:-build-gpu-bare-root}"
CUDA_ROOT="${CUDA_HOME:-/usr/local/cuda}"
MIRROR="${ARCHFIT_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
[ -f "$PACK_DIR/PACKED" ] || { echo "bare_root_check: $PACK_DIR is not a pack (tests/gpu/pack.sh)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "bare_root_check: needs root (chroot)" >&2; exit 2; }

if [ ! -x "$ROOT_DIR/usr/bin/cmake" ]; then
  command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null
  rm -rf "$ROOT_DIR"
  debootstrap_log="${TMPDIR:-/tmp}/archfit-bare-root-debootstrap.log"
  debootstrap --variant=minbase --include=cmake,g++,gcc,ninja-build,python3,binutils \
    bookworm "$ROOT_DIR" "$MIRROR" >"$debootstrap_log" 2>&1 ||
    { echo "bare_root_check: debootstrap failed; see $debootstrap_log" >&2; exit 1; }
fi

# The checkout as a GPU machine receives it (tracked and untracked files
# that git does not ignore), and the pack beside it.
rm -rf "$ROOT_DIR/checkout"
mkdir -p "$ROOT_DIR/checkout" "$ROOT_DIR/usr/local/cuda"
git ls-files -co --exclude-standard -z | tar -cf - --null -T - | tar -xf - -C "$ROOT_DIR/checkout"
cp -a "$PACK_DIR" "$ROOT_DIR/checkout/gpu-pack"

root=$(cd "$ROOT_DIR" && pwd)
unshare -m sh -c "
  mount --bind '$CUDA_ROOT' '$root/usr/local/cuda' &&
  mount -t proc proc '$root/proc' && mount --rbind /dev '$root/dev' &&
  chroot '$root' /usr/bin/env -i PATH=/usr/local/cuda/bin:/usr/bin:/bin HOME=/root \
    sh -c 'cd /checkout && ARCHFIT_GPU_PACK=gpu-pack tests/gpu/run.sh'"
