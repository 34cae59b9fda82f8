#!/bin/bash
# The Windows dependencies, proven (issue 35): tests/windows/deps_smoke.cpp
# built with mingw-w64 against tools/windows/build_deps.sh's libraries, run
# under Wine (every library gives its right answer), and its import table
# read with archfit's own PE reader (the Linux build's `archfit scan`): it
# may need no DLL but those Windows itself ships.
#
#   tests/windows/run_deps_smoke.sh BUILD_WINDOWS ARCHFIT
#     BUILD_WINDOWS  build-windows (deps/ in it from build_deps.sh)
#     ARCHFIT        the Linux build's archfit, to read the import table
set -euo pipefail
out=$(realpath "${1:?usage: run_deps_smoke.sh BUILD_WINDOWS ARCHFIT}")
archfit=$(realpath "${2:?usage: run_deps_smoke.sh BUILD_WINDOWS ARCHFIT}")
repo=$(cd "$(dirname "$0")/../.." && pwd)
deps="$out/deps"
exe="$out/deps_smoke.exe"

x86_64-w64-mingw32-g++-posix -std=c++20 -O2 -DBOOST_DLL_USE_STD_FS -I"$deps/include" \
  "$repo/tests/windows/deps_smoke.cpp" -o "$exe" -L"$deps/lib" \
  -lyaml-cpp -lre2 -lzip -lzstd -llz4 -lxxhash -lz -static -static-libgcc -static-libstdc++

# A Wine prefix of its own, made on first use (about 10 s), kept in the build.
export WINEPREFIX="$out/wineprefix" WINEDEBUG=-all
started=$(date +%s%N)
if ! wine "$exe" >"$out/deps_smoke.out" 2>&1; then
  cat "$out/deps_smoke.out" >&2
  echo "deps_smoke.exe failed under Wine" >&2
  exit 1
fi
ended=$(date +%s%N)
grep -v '^[[:space:]]*0000' "$out/deps_smoke.out" | grep -E ' ok | FAIL |every|some'
echo "under Wine in $(((ended - started) / 1000000)) ms (a new Wine prefix is made on the first run)"

# Only DLLs every Windows has: the kernel, the C runtime, and system APIs.
"$archfit" scan --json "$exe" | /usr/bin/python3 "$repo/tests/windows/windows_imports.py"
echo "deps_smoke.exe: $(stat -c %s "$exe") bytes, needs only what Windows ships"
