#!/bin/bash
# Lays out a CUDA 13 toolkit for Windows as NVIDIA's installer does, from
# PyPI's wheels in the realworld cache: NVRTC's DLLs in bin\x64 (from
# nvidia-cuda-nvrtc 13.0.88), this machine's CUDA 13 headers in include,
# version.json, and, where the compiler wheel (nvidia-cuda-nvcc 13.0.88) is
# cached too, fatbinary.exe in bin. For CUDA_PATH in the CLI tier
# (place_cli_tier.sh) and the smoke checks (run_windows_smoke.sh).
#
#   lay_out_cuda13_toolkit.sh WHEELS TOOLKIT
# Exits 3, saying why, when the NVRTC wheel or the headers are not here.
set -euo pipefail
wheels=$1 toolkit=$2
nvrtc13="$wheels/nvidia_cuda_nvrtc-13.0.88-py3-none-win_amd64.whl"
nvcc13="$wheels/nvidia_cuda_nvcc-13.0.88-py3-none-win_amd64.whl"
if [ ! -f "$nvrtc13" ] || [ ! -d /usr/local/cuda/include ]; then
  echo "no NVRTC for Windows: $nvrtc13 is not in the realworld cache (tests/realworld/fetch_wheels.py)"
  exit 3
fi
rm -rf "$toolkit"
mkdir -p "$toolkit/bin"
/usr/bin/python3 - "$nvrtc13" "$nvcc13" "$toolkit" <<'UNPACK'
import pathlib, shutil, sys, zipfile
nvrtc, nvcc, toolkit = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
def unpack(wheel, member, target):
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive, archive.open(member) as source, open(target, "wb") as out:
        shutil.copyfileobj(source, out)
with zipfile.ZipFile(nvrtc) as archive:
    dlls = [name for name in archive.namelist()
            if name.startswith("nvidia/cu13/bin/x86_64/") and not name.endswith("/")]
for member in dlls:
    unpack(nvrtc, member, toolkit / "bin" / "x64" / member.rsplit("/", 1)[1])
if nvcc.is_file():
    unpack(nvcc, "nvidia/cu13/bin/fatbinary.exe", toolkit / "bin" / "fatbinary.exe")
UNPACK
cp -r /usr/local/cuda/include "$toolkit/include"
echo '{"cuda_nvrtc": {"name": "CUDA NVRTC", "version": "13.0.88"}}' >"$toolkit/version.json"
echo "NVRTC 13.0.88 for Windows in $toolkit"
if [ -f "$toolkit/bin/fatbinary.exe" ]; then
  echo "fatbinary.exe 13.0.88 in $toolkit/bin"
else
  echo "no fatbinary.exe: $nvcc13 is not in the realworld cache; jit bundle cannot pack"
fi
