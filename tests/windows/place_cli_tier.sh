#!/bin/bash
# Lays out what the Windows CLI tier runs (tests/windows/CMakeLists.txt), in
# the Wine prefix's C: drive: archfit.exe, archfit.dll and the plugin helper
# in bin\ with the knowledge base in share\archfit\kb, as the zip unpacks;
# and, where the realworld cache has PyPI's Windows NVRTC 13 wheel, a CUDA 13
# toolkit as its installer lays one out (DLLs in bin\x64, headers in
# include), for CUDA_PATH.
#
#   place_cli_tier.sh PLACE ARCHFIT_EXE ARCHFIT_DLL PLUGIN_HELPER REPO WHEELS
set -euo pipefail
# Its owner's alone to write: archfit.exe refuses a helper or NVRTC others may change.
umask 022
place=$1 exe=$2 dll=$3 helper=$4 repo=$5 wheels=$6
rm -rf "$place"
mkdir -p "$place/bin" "$place/share/archfit"
cp "$exe" "$dll" "$helper" "$place/bin/"
cp -r "$repo/sdk/data/kb" "$place/share/archfit/kb"
nvrtc13="$wheels/nvidia_cuda_nvrtc-13.0.88-py3-none-win_amd64.whl"
if [ -f "$nvrtc13" ] && [ -d /usr/local/cuda/include ]; then
  toolkit="$place/CUDA/v13.0"
  /usr/bin/python3 -m zipfile -e "$nvrtc13" "$place/wheel13"
  mkdir -p "$toolkit/bin"
  mv "$place/wheel13/nvidia/cu13/bin/x86_64" "$toolkit/bin/x64"
  rm -rf "$place/wheel13"
  cp -r /usr/local/cuda/include "$toolkit/include"
  echo '{"cuda_nvrtc": {"name": "CUDA NVRTC", "version": "13.0.88"}}' >"$toolkit/version.json"
  echo "NVRTC 13.0.88 for Windows in $toolkit"
else
  echo "no NVRTC for Windows: $nvrtc13 is not in the realworld cache; the jit cases skip"
fi
