#!/bin/bash
# archfit.exe and archfit.dll, proven under Wine (issue 35):
#   1. they need no DLL beyond what Windows ships (read with the Linux
#      build's own PE reader);
#   2. archfit.exe --version answers as the Linux build does;
#   3. archfit.exe scan --json of every Windows DLL fixture (nvcc's fatbins in
#      mingw-linked DLLs) and, where the realworld cache holds them, of real
#      PyPI win_amd64 wheels' DLLs, is byte for byte the Linux build's report
#      of the same bytes, paths aside;
#   4. a folder with a non-ASCII name, and a path longer than MAX_PATH (260),
#      are walked and read;
#   5. the kernel cache is made under %LOCALAPPDATA%\archfit, private, and
#      `archfit.exe cache` lists it;
#   6. a missing file is reported with the Linux build's words;
#   7. `check --site-packages … --gpu sm_120` of a portable layout holding
#      PyPI's Windows bitsandbytes (when the realworld cache has it) gives
#      the Linux build's summary and verdict for the same folder; from here
#      on every folder sits under one named outside ASCII
#      ("Usuários José ΑΒΓ 模型");
#   8. `jit compile` with PyPI's Windows NVRTC (12.8 and 13.0), found on
#      PATH, through ARCHFIT_NVRTC and in a CUDA 13 toolkit's bin\x64
#      (CUDA_PATH), for several archs: each image scans as its arch, a
#      second run is a cache hit; cold and hit times printed;
#   9. from the zip `make windows` makes, unpacked, a bare `check` in a
#      ComfyUI_windows_portable folder finds python_embeded, and judges as
#      the Linux build does;
#  10. the ComfyUI pack (as `make comfyui-pack` lays it out, and as
#      `archfit.exe install comfyui` makes it) carries archfit.dll, its
#      helper and the knowledge base; a C host loads the DLL as ctypes does
#      and its check gives the Linux build's verdict;
#  11. `explain -f` reads a log in such a folder.
# Plugins under Wine are the CLI tier's (tests/cli/cli_plugins_test.cpp).
# Prints the time of each scan under Wine and on Linux (Wine adds its own
# overhead: reported, never tuned to).
#
#   tests/windows/run_windows_smoke.sh WINDOWS_OUT LINUX_BUILD
#     WINDOWS_OUT  build-windows (archfit.exe, archfit.dll from `make windows`)
#     LINUX_BUILD  the Linux build folder (sdk/archfit, tests/fixtures/out)
set -euo pipefail
# What it makes is its owner's alone to write, whatever the caller's umask:
# archfit.exe refuses NVRTC, plugins and caches that others may change.
umask 022
out=$(realpath "${1:?usage: run_windows_smoke.sh WINDOWS_OUT LINUX_BUILD}")
linux_build=$(realpath "${2:?usage: run_windows_smoke.sh WINDOWS_OUT LINUX_BUILD}")
repo=$(cd "$(dirname "$0")/../.." && pwd)
linux_archfit="$linux_build/sdk/archfit"
exe="$out/archfit.exe"
fixtures="$linux_build/tests/fixtures/out"

export WINEPREFIX="$out/wineprefix" WINEDEBUG=-all
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
# archfit.exe under Wine; Wine's own start-up lines are not archfit's.
run_exe() { wine "$exe" "$@"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

echo "== 1. imports"
"$linux_archfit" scan --json "$exe" "$out/archfit.dll" |
  /usr/bin/python3 "$repo/tests/windows/windows_imports.py" || fail "imports beyond Windows' own"
ls -l "$exe" "$out/archfit.dll" "$out/archfit.lib" | awk '{print $5, $9}'

echo "== 2. version"
windows_version=$(run_exe --version | tr -d '\r')
linux_version=$("$linux_archfit" --version)
[ "$windows_version" = "$linux_version" ] || fail "version: '$windows_version' vs '$linux_version'"
echo "archfit.exe --version: $windows_version"

echo "== 3. scan reports match the Linux build's"
compare_scan() {  # NAME FILE...: one scan of the files by each build, compared
  local name=$1
  shift
  local started ended linux_ms windows_ms
  started=$(now_ms)
  "$linux_archfit" scan --json "$@" >"$work/$name.linux.json" || true
  ended=$(now_ms)
  linux_ms=$((ended - started))
  started=$(now_ms)
  run_exe scan --json "$@" >"$work/$name.windows.json" 2>"$work/$name.windows.err" || true
  ended=$(now_ms)
  windows_ms=$((ended - started))
  if /usr/bin/python3 "$repo/tests/windows/same_scan.py" "$work/$name.linux.json" \
    "$work/$name.windows.json"; then
    echo "$name: $# files, same report; Linux ${linux_ms} ms, Wine ${windows_ms} ms"
  else
    cat "$work/$name.windows.err" >&2
    fail "$name: the reports differ"
  fi
}
compare_scan fixtures "$fixtures"/pe_*.dll
cache="${ARCHFIT_REALWORLD_CACHE:-$HOME/.cache/archfit-realworld}/wheels"
for wheel in "$cache"/*win_amd64.whl; do
  [ -f "$wheel" ] || continue
  name=$(basename "$wheel" .whl)
  mkdir -p "$work/$name"
  /usr/bin/python3 -m zipfile -e "$wheel" "$work/$name"
  mapfile -t dlls < <(find "$work/$name" -iname '*.dll' -o -iname '*.pyd' | sort)
  if [ "${#dlls[@]}" -eq 0 ]; then
    echo "$name: no DLL in it (the compiler wheel carries programs only)"
    continue
  fi
  compare_scan "$name" "${dlls[@]}"
done

echo "== 4. a non-ASCII folder and a path past MAX_PATH"
odd="$work/Modèles ΑΒΓ 模型"
mkdir -p "$odd"
cp "$fixtures/pe_sm_120.dll" "$odd/"
run_exe scan --json "$odd" >"$work/odd.json" || true
/usr/bin/python3 -c '
import json, sys
report = json.load(open(sys.argv[1], encoding="utf-8"))
files = [f for f in report["files"] if f["path"].endswith("pe_sm_120.dll")]
assert files and files[0]["images"], report
assert "Modèles ΑΒΓ 模型" in files[0]["path"], files[0]["path"]
print("walked and read:", files[0]["path"])
' "$work/odd.json" || fail "the non-ASCII folder"
deep="$work"
while [ ${#deep} -lt 300 ]; do deep="$deep/a_rather_long_folder_name"; done
mkdir -p "$deep"
cp "$fixtures/pe_sm_120.dll" "$deep/"
run_exe scan --json "$deep/pe_sm_120.dll" >"$work/deep.json" || true
/usr/bin/python3 -c '
import json, sys
report = json.load(open(sys.argv[1]))
assert report["files"][0]["images"], report["files"][0]
print(f"read a path of {len(sys.argv[2])} characters")
' "$work/deep.json" "$deep/pe_sm_120.dll" || fail "the path past MAX_PATH"

echo "== 5. the kernel cache's folder"
cache_root="$WINEPREFIX/drive_c/users/$(id -un)/AppData/Local/archfit"
rm -rf "$cache_root"
run_exe cache stats >"$work/cache.txt" 2>&1 || true
tr -d '\r' <"$work/cache.txt"
[ -d "$cache_root" ] || fail "no cache folder made at $cache_root"

echo "== 6. a missing file"
run_exe scan "C:\\no\\such\\file.dll" >"$work/missing.txt" 2>&1 || true
"$linux_archfit" scan /no/such/file.dll >"$work/missing.linux.txt" 2>&1 || true
grep -q "No such file or directory" "$work/missing.txt" ||
  fail "a missing file: $(tr -d '\r' <"$work/missing.txt")"
grep -q "No such file or directory" "$work/missing.linux.txt" || fail "Linux words changed"

echo "== 7. check of a portable layout, in a folder named outside ASCII"
# As under a user folder named in another script (C:\Users\José\…): every
# command from here on takes paths with such names.
home="$work/Usuários José ΑΒΓ 模型"
portable="$home/ComfyUI_windows_portable"
bitsandbytes="$cache/bitsandbytes-0.50.2-py3-none-win_amd64.whl"
if [ -f "$bitsandbytes" ]; then
  site="$portable/python_embeded/Lib/site-packages"
  mkdir -p "$site"
  /usr/bin/python3 -m zipfile -e "$bitsandbytes" "$site"
  "$linux_archfit" check --json --site-packages "$site" --gpu sm_120 >"$work/check.linux.json" || true
  run_exe check --json --site-packages "$(winepath -w "$site")" --gpu sm_120 \
    >"$work/check.windows.json" || true
  /usr/bin/python3 -c '
import json, sys
linux, windows = (json.load(open(name, encoding="utf-8")) for name in sys.argv[1:])
for key in ("verdict", "summary"):
    assert linux[key] == windows[key], (key, linux[key], windows[key])
print("same verdict and summary:", windows["summary"])
' "$work/check.linux.json" "$work/check.windows.json" || fail "check of the portable layout"
else
  echo "skipped: $bitsandbytes is not in the realworld cache (tests/realworld/fetch_wheels.py)"
fi

echo "== 8. jit compile with PyPI's Windows NVRTC, found as Windows users have it"
nvrtc12="$cache/nvidia_cuda_nvrtc_cu12-12.8.93-py3-none-win_amd64.whl"
runtime12="$cache/nvidia_cuda_runtime_cu12-12.8.90-py3-none-win_amd64.whl"
# On the Wine prefix's C: drive, not beside the build: Wine shows a sticky
# world-writable folder (mode 1777, as /tmp, where a clone may well be) as
# an ACL that lets Everyone write, and archfit rightly refuses NVRTC and
# plugins below one. winepath names these C:\archfit-smoke\….
trusted_work="$WINEPREFIX/drive_c/archfit-smoke"
jit_work="$trusted_work/jit"
rm -rf "$jit_work"
mkdir -p "$jit_work"
trap 'rm -rf "$work" "$trusted_work"' EXIT
# LABEL ARCH SOURCE [VAR=VALUE…]: compiles SOURCE for ARCH into a fresh
# cache, then again (a hit), and has the Linux build scan the image.
jit_compile() {
  local label=$1 arch=$2 source=$3
  shift 3
  local cache_dir="$jit_work/cache-$label-ü" image="$jit_work/$label-$arch-ü.image"
  local started cold_ms hit_ms
  rm -rf "$cache_dir"
  started=$(now_ms)
  if ! env -u CUDA_HOME "$@" ARCHFIT_CACHE_DIR="$(winepath -w "$cache_dir")" wine "$exe" jit compile --json \
    --arch "$arch" "$(winepath -w "$source")" -o "$(winepath -w "$image")" \
    >"$jit_work/$label-$arch.json" 2>"$jit_work/$label-$arch.err"; then
    tr -d '\r' <"$jit_work/$label-$arch.err" >&2
    fail "jit compile $label $arch"
    return
  fi
  cold_ms=$(($(now_ms) - started))
  started=$(now_ms)
  env -u CUDA_HOME "$@" ARCHFIT_CACHE_DIR="$(winepath -w "$cache_dir")" wine "$exe" jit compile --json \
    --arch "$arch" "$(winepath -w "$source")" >"$jit_work/$label-$arch.hit.json" 2>&1 ||
    fail "jit compile $label $arch, the second time"
  hit_ms=$(($(now_ms) - started))
  /usr/bin/python3 - "$jit_work/$label-$arch.json" "$jit_work/$label-$arch.hit.json" \
    "$arch" "$label" "$cold_ms" "$hit_ms" <<'CHECK' || fail "jit compile $label $arch: the answer"
import json, sys
cold, hit = (json.load(open(name, encoding="utf-8")) for name in sys.argv[1:3])
arch, label, cold_ms, hit_ms = sys.argv[3:]
assert cold["cache"] == "built" and cold["scanned"] == arch and cold["confirmed"], cold
assert hit["cache"] == "primary" and hit["key"] == cold["key"], hit  # served from the cache
print(f"{label} {arch}: {cold['nvrtc']}; cold {cold_ms} ms (NVRTC {cold['milliseconds']:.0f} ms), "
      f"hit {hit_ms} ms")
CHECK
  # The Linux build's scan of the image: its arch is the one asked for.
  "$linux_archfit" scan --json "$image" | /usr/bin/python3 -c '
import json, sys
images = json.load(sys.stdin)["files"][0]["images"]
arch = sys.argv[1]
want = ("ptx" if arch.startswith("compute_") else "sass", arch)
assert [(i["kind"], i["arch"]) for i in images] == [want], images
' "$arch" || fail "jit compile $label $arch: the image scans as something else"
}
if [ -f "$nvrtc12" ] && [ -f "$runtime12" ]; then
  # A site-packages as pip lays out nvidia-cuda-nvrtc-cu12 and
  # nvidia-cuda-runtime-cu12 on Windows (nvidia\cuda_nvrtc\bin beside
  # nvidia\cuda_runtime\include), its bin folder on PATH (WINEPATH).
  site12="$jit_work/site12"
  /usr/bin/python3 -m zipfile -e "$nvrtc12" "$site12"
  /usr/bin/python3 -m zipfile -e "$runtime12" "$site12"
  for arch in sm_86 sm_120 compute_90; do
    jit_compile cu12-path "$arch" "$repo/kernels/rmsnorm.cu" \
      WINEPATH="$(winepath -w "$site12/nvidia/cuda_nvrtc/bin")"
  done
  jit_compile cu12-archfit-nvrtc sm_89 "$repo/kernels/groupnorm_silu.cu" \
    ARCHFIT_NVRTC="$(winepath -w "$site12/nvidia/cuda_nvrtc/bin/nvrtc64_120_0.dll")"
else
  echo "skipped: the CUDA 12 Windows NVRTC and runtime wheels are not in the realworld cache"
fi
# A CUDA 13 toolkit as its Windows installer lays it out, named by CUDA_PATH.
toolkit13="$jit_work/CUDA/v13.0"
if "$repo/tests/windows/lay_out_cuda13_toolkit.sh" "$cache" "$toolkit13"; then
  for arch in sm_100 sm_120 sm_121; do
    jit_compile cu13-cuda-path "$arch" "$repo/kernels/fp8_to_bf16.cu" \
      CUDA_PATH="$(winepath -w "$toolkit13")"
  done
  # A source, its output, the cache and the toolkit in folders named
  # outside ASCII.
  odd_jit="$jit_work/Modèles ΑΒΓ 模型"
  mkdir -p "$odd_jit"
  cp "$repo/kernels/rmsnorm.cu" "$odd_jit/"
  mv "$jit_work/CUDA" "$odd_jit/CUDA"
  jit_compile cu13-non-ascii sm_120 "$odd_jit/rmsnorm.cu" \
    CUDA_PATH="$(winepath -w "$odd_jit/CUDA/v13.0")"
else
  echo "skipped: no CUDA 13 toolkit for Windows (said above)"
fi

echo "== 9. a bare check in a ComfyUI portable folder"
# As a Windows user runs it: the zip `make windows` makes, unpacked into a
# folder of their own (section 10 installs the ComfyUI pack from it too).
/usr/bin/python3 -m zipfile -e "$out/archfit-windows-x64.zip" "$home/Tools"
zipped_exe="$home/Tools/archfit/bin/archfit.exe"
if [ -d "$portable/python_embeded/Lib/site-packages" ]; then
  mkdir -p "$portable/ComfyUI/custom_nodes"
  touch "$portable/ComfyUI/main.py" "$portable/python_embeded/python.exe"
  # Its archfit.exe run from the portable folder with no argument but the
  # GPU: the folder it runs in says which environment.
  (cd "$portable" && env -u VIRTUAL_ENV -u CONDA_PREFIX wine "$zipped_exe" check --json --gpu sm_120 \
    >"$work/bare.windows.json" 2>"$work/bare.windows.err") || true
  (cd "$portable" && env -u VIRTUAL_ENV -u CONDA_PREFIX "$linux_archfit" check --json --gpu sm_120 \
    >"$work/bare.linux.json" 2>&1) || true
  /usr/bin/python3 -c '
import json, sys
linux, windows = (json.load(open(name, encoding="utf-8")) for name in sys.argv[1:])
assert windows["environment"]["source"] == "ComfyUI portable", windows["environment"]
for key in ("verdict", "summary"):
    assert linux[key] == windows[key], (key, linux[key], windows[key])
print("bare check found", windows["environment"]["source"], "at", windows["environment"]["path"])
' "$work/bare.linux.json" "$work/bare.windows.json" ||
    { tr -d '\r' <"$work/bare.windows.err" >&2; fail "bare check in the portable folder"; }
else
  echo "skipped: no portable layout (section 7 was skipped)"
fi

echo "== 10. the ComfyUI pack's archfit.dll, loaded as ctypes loads it"
# `make comfyui-pack`'s layout: the Linux build's pack with the Windows
# files beside the Linux library.
linux_pack="$work/linux-pack/ComfyUI"
mkdir -p "$linux_pack/custom_nodes"
touch "$linux_pack/main.py"
"$linux_archfit" install comfyui "$linux_pack" >/dev/null
linux_binding="$linux_pack/custom_nodes/comfyui-archfit/vendor/python/archfit"
cp "$out/archfit.dll" "$linux_binding/lib/"
cp "$out/archfit-plugin-probe.exe" "$linux_binding/libexec/archfit/"
# A Windows user's: `archfit.exe install comfyui` from the unpacked zip.
comfy="$home/ComfyUI"
mkdir -p "$comfy/custom_nodes"
touch "$comfy/main.py"
if [ -f "$home/Tools/archfit/bin/archfit.exe" ]; then
  wine "$home/Tools/archfit/bin/archfit.exe" install comfyui "$(winepath -w "$comfy")" \
    >"$work/install.txt" 2>&1 || { tr -d '\r' <"$work/install.txt" >&2; fail "archfit.exe install comfyui"; }
fi
binding="$comfy/custom_nodes/comfyui-archfit/vendor/python/archfit"
for pack in "$linux_binding" "$binding"; do
  for part in lib/archfit.dll libexec/archfit/archfit-plugin-probe.exe share/archfit/kb/gpus.yaml \
    __init__.py _library.py; do
    [ -f "$pack/$part" ] || fail "the pack at $pack lacks $part"
  done
done
x86_64-w64-mingw32-gcc -O2 -municode -Wall -Werror -I"$out/include" \
  -o "$work/dll_host.exe" "$repo/tests/windows/dll_host.c"
if [ -d "$portable/python_embeded/Lib/site-packages" ] && [ -f "$binding/lib/archfit.dll" ]; then
  rc=0
  wine "$work/dll_host.exe" "$(winepath -w "$binding/lib/archfit.dll")" \
    "$(winepath -w "$portable/python_embeded/Lib/site-packages")" sm_120 \
    >"$work/dll_host.txt" 2>&1 || rc=$?
  tr -d '\r' <"$work/dll_host.txt" | head -5
  linux_rc=0
  "$linux_archfit" check --site-packages "$portable/python_embeded/Lib/site-packages" \
    --gpu sm_120 >/dev/null 2>&1 || linux_rc=$?
  [ "$rc" = "$linux_rc" ] || fail "archfit.dll's verdict $rc is not the Linux build's $linux_rc"
  grep -q "archfit.dll $windows_version" <(tr -d '\r' <"$work/dll_host.txt") ||
    fail "archfit.dll did not load as ctypes loads it"
fi

echo "== 11. explain reads a log from a folder named outside ASCII"
mkdir -p "$home/logs"
printf 'torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device\n' \
  >"$home/logs/comfyui.log"
run_exe explain --json -f "$(winepath -w "$home/logs/comfyui.log")" >"$work/explain.json" 2>&1 || true
"$linux_archfit" explain --json -f "$home/logs/comfyui.log" >"$work/explain.linux.json" 2>&1 || true
/usr/bin/python3 -c '
import json, sys
linux, windows = (json.load(open(name, encoding="utf-8")) for name in sys.argv[1:])
assert windows["category"] == linux["category"], (windows["category"], linux["category"])
print("explain -f: category", windows["category"])
' "$work/explain.linux.json" "$work/explain.json" || fail "explain -f in a non-ASCII folder"

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "archfit.exe works under Wine"
