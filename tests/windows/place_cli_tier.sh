#!/bin/bash
# Lays out what the Windows CLI tier runs (tests/windows/CMakeLists.txt), in
# the Wine prefix's C: drive: archfit.exe, archfit.dll and the plugin helper
# in bin\ with the knowledge base in share\archfit\kb, as the zip unpacks;
# and, where the realworld cache has PyPI's Windows NVRTC 13 wheel, a CUDA 13
# toolkit as its installer lays one out (DLLs in bin\x64, headers in
# include), for CUDA_PATH; and the test plugins built for Windows, in
# PLUGIN_FOLDER\out and PLUGIN_FOLDER\faulty.
#
#   place_cli_tier.sh PLACE ARCHFIT_EXE ARCHFIT_DLL PLUGIN_HELPER REPO WHEELS PLUGINS FAULTY
#     PLUGIN_FOLDER
set -euo pipefail
# Its owner's alone to write: archfit.exe refuses a helper or NVRTC others may change.
umask 022
place=$1 exe=$2 dll=$3 helper=$4 repo=$5 wheels=$6 plugins=$7 faulty=$8 plugin_folder=$9
rm -rf "$place"
mkdir -p "$place/bin" "$place/share/archfit" "$place/$plugin_folder"
cp "$exe" "$dll" "$helper" "$place/bin/"
cp -r "$plugins" "$place/$plugin_folder/out"
cp -r "$faulty" "$place/$plugin_folder/faulty"
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
  # The toolkit's fatbinary.exe (in bin, where CUDA 13 left its programs),
  # from the compiler's Windows wheel: what `jit bundle` packs with.
  nvcc13="$wheels/nvidia_cuda_nvcc-13.0.88-py3-none-win_amd64.whl"
  if [ -f "$nvcc13" ]; then
    /usr/bin/python3 - "$nvcc13" "$toolkit/bin/fatbinary.exe" <<'UNPACK'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open("nvidia/cu13/bin/fatbinary.exe") as source:
    with open(sys.argv[2], "wb") as target:
        shutil.copyfileobj(source, target)
UNPACK
    echo "fatbinary.exe 13.0.88 in $toolkit/bin"
  else
    echo "no fatbinary.exe: $nvcc13 is not in the realworld cache; the bundle cases skip"
  fi
else
  echo "no NVRTC for Windows: $nvrtc13 is not in the realworld cache; the jit cases skip"
fi
