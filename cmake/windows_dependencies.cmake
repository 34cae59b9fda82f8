# The dependencies of a Windows build (issue 35; cmake/mingw-w64-x86_64.cmake),
# from ARCHFIT_WINDOWS_DEPS (tools/windows/build_deps.sh), under the same
# target names the Linux build gets from Debian's packages, so nothing
# below the top-level CMakeLists.txt knows which platform it builds for.
if(NOT ARCHFIT_WINDOWS_DEPS OR NOT EXISTS "${ARCHFIT_WINDOWS_DEPS}/include/zstd.h")
  message(FATAL_ERROR "ARCHFIT_WINDOWS_DEPS=${ARCHFIT_WINDOWS_DEPS} holds no dependencies: "
                      "run `make windows-deps` (tools/windows/build_deps.sh) first")
endif()
set(_deps "${ARCHFIT_WINDOWS_DEPS}")

# archfit_windows_library(<target> <archive> [<more archives>…]): an imported
# static library with the dependencies' headers.
function(archfit_windows_library target)
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  set(archives "")
  foreach(name IN LISTS ARGN)
    list(APPEND archives "${_deps}/lib/${name}")
  endforeach()
  set_target_properties(${target} PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_deps}/include"
    INTERFACE_LINK_LIBRARIES "${archives}")
endfunction()

find_package(Threads REQUIRED)
# Header-only: the Linux build's own headers (build_deps.sh links them in).
foreach(target Boost::headers nlohmann_json::nlohmann_json CLI11::CLI11)
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_deps}/include")
endforeach()
archfit_windows_library(zstd::libzstd_shared libzstd.a)
archfit_windows_library(PkgConfig::LZ4 liblz4.a)
archfit_windows_library(PkgConfig::XXHASH libxxhash.a)
archfit_windows_library(PkgConfig::RE2 libre2.a)
# libzip inflates with zlib: Debian's mingw-w64 zlib.
archfit_windows_library(PkgConfig::LIBZIP libzip.a)
set_property(TARGET PkgConfig::LIBZIP APPEND PROPERTY INTERFACE_LINK_LIBRARIES
  /usr/x86_64-w64-mingw32/lib/libz.a)
archfit_windows_library(yaml-cpp libyaml-cpp.a)
# CUDA's headers are the build machine's toolkit's, the same for both
# platforms: looked for outside the Windows sysroot.
find_path(ARCHFIT_CUDA_INCLUDE_DIR cuda.h HINTS "$ENV{CUDA_HOME}" "$ENV{CUDA_PATH}" /usr/local/cuda
  PATH_SUFFIXES include NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
find_package(ArchfitCudaHeaders REQUIRED)
set(ARCHFIT_TORCH_FOUND FALSE)
# GoogleTest for the Windows test tier (tests/windows), where build_deps.sh
# built it.
if(EXISTS "${_deps}/lib/libgtest.a")
  archfit_windows_library(GTest::gtest libgtest.a)
  archfit_windows_library(GTest::gtest_main libgtest_main.a libgtest.a)
endif()
