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
# Where the wheels are not cached, the jit cases skip, saying so.
"$repo/tests/windows/lay_out_cuda13_toolkit.sh" "$wheels" "$place/CUDA/v13.0" || true
