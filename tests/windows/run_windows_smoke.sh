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
#      the Linux build's summary and verdict for the same folder.
# Prints the time of each scan under Wine and on Linux (Wine adds its own
# overhead: reported, never tuned to).
#
#   tests/windows/run_windows_smoke.sh WINDOWS_OUT LINUX_BUILD
#     WINDOWS_OUT  build-windows (archfit.exe, archfit.dll from `make windows`)
#     LINUX_BUILD  the Linux build folder (sdk/archfit, tests/fixtures/out)
set -euo pipefail
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

echo "== 7. check of a portable layout"
bitsandbytes="$cache/bitsandbytes-0.50.2-py3-none-win_amd64.whl"
if [ -f "$bitsandbytes" ]; then
  site="$work/ComfyUI_windows_portable/python_embeded/Lib/site-packages"
  mkdir -p "$site"
  /usr/bin/python3 -m zipfile -e "$bitsandbytes" "$site"
  "$linux_archfit" check --json --site-packages "$site" --gpu sm_120 >"$work/check.linux.json" || true
  run_exe check --json --site-packages "$site" --gpu sm_120 >"$work/check.windows.json" || true
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

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "archfit.exe works under Wine"
