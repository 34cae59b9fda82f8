#!/bin/bash
# Cross-builds archfit's compiled dependencies for 64-bit Windows (issue 35)
# from Debian 12's own source packages, at the versions Debian builds the
# Linux archfit with, as static mingw-w64 libraries; and puts the
# header-only ones (Boost, nlohmann-json, CLI11) beside them from Debian's
# -dev packages, whose headers are the same for every platform.
#
#   tools/windows/build_deps.sh OUT
#     OUT/include, OUT/lib       what archfit's Windows build is given
#     OUT/src                    the unpacked sources, OUT/build the builds
#
# Needs: g++-mingw-w64-x86-64, mingw-w64-tools, libz-mingw-w64-dev (zlib for
# libzip), dpkg-dev (dpkg-source), unicode-data and perl (RE2's tables), and
# the -dev packages of the Linux build (the header-only libraries).
#
# Why Debian's sources: this machine reaches Debian's archive and PyPI only;
# they are the versions the Linux build is tested with; and apt checks their
# signatures. A private sources folder keeps the system's apt untouched.
# Safe to run twice: a library already installed in OUT is not rebuilt.
set -euo pipefail
out=$(realpath -m "${1:?usage: build_deps.sh OUT}")
repo=$(cd "$(dirname "$0")/../.." && pwd)
toolchain="$repo/cmake/mingw-w64-x86_64.cmake"
jobs=${JOBS:-$(nproc)}

# source package, version (Debian 12), and the CMake folder inside it
packages=(
  "yaml-cpp 0.7.0+dfsg-8 ."
  # NOT the Linux build's 1.5.4+dfsg2-5+deb12u1: that security update
  # (CVE-2026-124851, information disclosure decompressing crafted input;
  # less streaming memory) has its source only in the security archive,
  # whose source pool answers 404 from here. A Windows build that ships
  # must carry that fix first (issue 35).
  "libzstd 1.5.4+dfsg2-5 build/cmake"
  "lz4 1.9.4-1 build/cmake"
  "xxhash 0.8.1-1 cmake_unofficial"
  "libzip 1.7.3-1 ."
  "re2 20220601+dfsg-1 ."
)

apt_dir="$out/apt"
mkdir -p "$apt_dir/sources" "$apt_dir/lists/partial" "$out/src" "$out/build" "$out/include" "$out/lib"
cat >"$apt_dir/sources/debian-src.sources" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
apt_private=(-o "Dir::Etc::SourceParts=$apt_dir/sources" -o "Dir::Etc::SourceList=/dev/null"
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache::archives=$apt_dir")
# bookworm's point releases carry the security updates' sources too (the
# security archive's source pool is not reachable from here).
lists=("$apt_dir"/lists/*_Sources*)
if [ ! -e "${lists[0]}" ]; then
  apt-get "${apt_private[@]}" update -q >/dev/null
fi

# Per library: its CMake options (static, no tools, no tests, no docs).
cmake_options() {
  case $1 in
    yaml-cpp) echo "-DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=OFF -DYAML_CPP_BUILD_CONTRIB=OFF -DYAML_BUILD_SHARED_LIBS=OFF" ;;
    libzstd) echo "-DZSTD_BUILD_SHARED=OFF -DZSTD_BUILD_STATIC=ON -DZSTD_BUILD_PROGRAMS=OFF -DZSTD_BUILD_TESTS=OFF -DZSTD_MULTITHREAD_SUPPORT=OFF" ;;
    lz4) echo "-DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON -DLZ4_BUILD_CLI=OFF -DLZ4_BUILD_LEGACY_LZ4C=OFF" ;;
    xxhash) echo "-DBUILD_SHARED_LIBS=OFF -DXXHASH_BUILD_XXHSUM=OFF" ;;
    re2) echo "-DBUILD_SHARED_LIBS=OFF -DRE2_BUILD_TESTING=OFF" ;;
    googletest) echo "-DBUILD_GMOCK=OFF -DINSTALL_GTEST=ON -Dgtest_disable_pthreads=ON" ;;
    libzip) echo "-DBUILD_SHARED_LIBS=OFF -DBUILD_TOOLS=OFF -DBUILD_REGRESS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_DOC=OFF -DENABLE_BZIP2=OFF -DENABLE_LZMA=OFF -DENABLE_ZSTD=OFF -DENABLE_OPENSSL=OFF -DENABLE_GNUTLS=OFF -DENABLE_MBEDTLS=OFF -DENABLE_WINDOWS_CRYPTO=OFF -DENABLE_COMMONCRYPTO=OFF" ;;
  esac
}

# cross_build NAME VERSION SOURCE_DIR: configures, builds and installs one
# CMake project into OUT, once (a stamp in OUT/lib says it is there).
cross_build() {
  local name=$1 version=$2 source_dir=$3
  local build="$out/build/$name"
  rm -rf "$build"
  # shellcheck disable=SC2046  # the options are words
  cmake -S "$source_dir" -B "$build" -G "Unix Makefiles" \
    -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DARCHFIT_WINDOWS_DEPS="$out" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$out" \
    -DCMAKE_POSITION_INDEPENDENT_CODE=OFF $(cmake_options "$name") >"$build.configure.log" 2>&1 ||
    { tail -n 30 "$build.configure.log" >&2; exit 1; }
  cmake --build "$build" -j "$jobs" >"$build.build.log" 2>&1 || { tail -n 30 "$build.build.log" >&2; exit 1; }
  cmake --install "$build" >/dev/null
  touch "$out/lib/.built-$name-$version"
}

for entry in "${packages[@]}"; do
  read -r name version cmake_dir <<<"$entry"
  [ -e "$out/lib/.built-$name-$version" ] && continue
  echo "archfit windows deps: $name $version" >&2
  src="$out/src/$name-$version"
  if [ ! -d "$src" ]; then
    (cd "$out/src" && apt-get "${apt_private[@]}" source -q --download-only "$name=$version" >/dev/null)
    dsc=$(ls "$out/src/${name}_${version#*:}.dsc")
    dpkg-source --no-check -x "$dsc" "$src" >/dev/null
  fi
  if [ "$name" = re2 ]; then
    # Debian's source leaves out the generated tables (+dfsg) and makes
    # them at build time from Debian's unicode-data, as here.
    [ -e "$src/re2/perl_groups.cc" ] || perl "$src/re2/make_perl_groups.pl" >"$src/re2/perl_groups.cc"
    for table in casefold groups; do
      [ -e "$src/re2/unicode_$table.cc" ] ||
        (cd "$src/re2" && /usr/bin/python3 "make_unicode_$table.py" >"unicode_$table.cc")
    done
  fi
  cross_build "$name" "$version" "$src/$cmake_dir"
done

# GoogleTest, for the Windows test tier (tests/windows, `make
# test-windows`): the source Debian's googletest package installs, the
# version the Linux tests are built with.
gtest_version=$(dpkg-query -W -f='${Version}' googletest)
if [ ! -e "$out/lib/.built-googletest-$gtest_version" ]; then
  echo "archfit windows deps: googletest $gtest_version" >&2
  cross_build googletest "$gtest_version" /usr/src/googletest
fi

# Header-only, from Debian's -dev packages (the Linux build's versions).
for header in boost nlohmann CLI; do
  [ -e "$out/include/$header" ] || ln -s "/usr/include/$header" "$out/include/$header"
done
echo "archfit windows deps: in $out" >&2
