# Proves that `cmake --install` gives a usable SDK: installs the build tree
# into a fresh prefix, checks what landed there, then configures, builds and
# runs a third-party project (project/) against the installed package only.
#
#   cmake -DARCHFIT_BUILD_DIR=<build tree> -DCONSUMER_SOURCE_DIR=<project/> -DWORK_DIR=<scratch>
#         [-DGENERATOR=… -DMAKE_PROGRAM=… -DC_COMPILER=… -DCXX_COMPILER=… -DREADELF=…]
#         [-DEXPECT_CLI=0]   (the build has ARCHFIT_BUILD_CLI=OFF: no bin/archfit)
#         -P run_install_consumer.cmake
#
# WORK_DIR is emptied first, so the test gives the same answer however often it runs.
cmake_minimum_required(VERSION 3.25)

foreach(required ARCHFIT_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR)
  if(NOT ${required})
    message(FATAL_ERROR "${required} is not set")
  endif()
endforeach()
if(NOT READELF)
  find_program(READELF readelf REQUIRED)
endif()
if(NOT DEFINED EXPECT_CLI)
  set(EXPECT_CLI 1)
endif()

set(prefix "${WORK_DIR}/prefix")
string(REGEX REPLACE "([][+.*()^$?|\\])" "\\\\\\1" prefix_re "${prefix}")  # for use inside a regex
set(consumer_build "${WORK_DIR}/consumer-build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

include("${CMAKE_CURRENT_LIST_DIR}/../../cmake/consumer_build.cmake")

# ---- install -------------------------------------------------------------------------
run("cmake --install" "${CMAKE_COMMAND}" --install "${ARCHFIT_BUILD_DIR}" --prefix "${prefix}")
message(STATUS "installed into ${prefix}")

# ---- what the installed tree holds ---------------------------------------------------------
set(problems "")
foreach(file IN ITEMS
    include/archfit/archfit.h
    include/archfit/archfit_version.h
    include/archfit/archfit.hpp
    lib/libarchfit.so
    lib/libarchfit.so.0
    lib/cmake/archfit/archfit-config.cmake
    lib/cmake/archfit/archfit-config-version.cmake
    lib/cmake/archfit/archfit-targets.cmake)
  if(NOT EXISTS "${prefix}/${file}")
    list(APPEND problems "missing ${file}")
  endif()
endforeach()
if(EXPECT_CLI AND NOT EXISTS "${prefix}/bin/archfit")
  list(APPEND problems "missing bin/archfit")
endif()
# Only the public SDK is installed: no core archive, no private headers.
file(GLOB_RECURSE installed RELATIVE "${prefix}" "${prefix}/*")
foreach(file IN LISTS installed)
  if(file MATCHES "archfit_core|\\.a$")
    list(APPEND problems "installs a private build product: ${file}")
  elseif(file MATCHES "^include/" AND NOT file MATCHES "^include/archfit/[^/]+\\.h(pp)?$")
    list(APPEND problems "installs a header outside include/archfit: ${file}")
  endif()
endforeach()

if(EXISTS "${prefix}/lib/libarchfit.so.0")
  execute_process(COMMAND "${READELF}" -d "${prefix}/lib/libarchfit.so.0" OUTPUT_VARIABLE dynamic RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    list(APPEND problems "readelf -d lib/libarchfit.so.0 failed")
  elseif(NOT dynamic MATCHES "\\(SONAME\\)[^\n]*\\[libarchfit\\.so\\.0\\]")
    list(APPEND problems "lib/libarchfit.so.0 has no SONAME libarchfit.so.0:\n${dynamic}")
  endif()
  # The installed library must not point back into the build tree.
  if(dynamic MATCHES "\\((RPATH|RUNPATH)\\)[^\n]*\\[([^]]*)\\]")
    string(FIND "${CMAKE_MATCH_2}" "${ARCHFIT_BUILD_DIR}" at)
    if(NOT at EQUAL -1)
      list(APPEND problems "lib/libarchfit.so.0 keeps the build tree in its ${CMAKE_MATCH_1}: ${CMAKE_MATCH_2}")
    endif()
  endif()
endif()
if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "the installed tree in ${prefix} is not a usable SDK:\n  ${text}")
endif()

if(EXPECT_CLI)
  # archfit.h takes its version from archfit_version.h, generated from project(VERSION).
  file(STRINGS "${prefix}/include/archfit/archfit_version.h" version_line REGEX "^#define ARCHFIT_VERSION_STRING ")
  string(REGEX MATCH "\"[^\"]+\"" header_version "${version_line}")
  string(REPLACE "\"" "" header_version "${header_version}")
  run("installed bin/archfit --version" "${prefix}/bin/archfit" --version)
  string(STRIP "${out}" cli_version)
  if(NOT header_version OR NOT cli_version STREQUAL header_version)
    message(FATAL_ERROR "bin/archfit --version printed '${cli_version}'; the installed archfit_version.h says '${header_version}'")
  endif()
  run("installed bin/archfit scan --json" "${prefix}/bin/archfit" scan --json "${prefix}/lib/libarchfit.so.0")
  if(NOT out MATCHES "\"schema\": *\"archfit.scan/1\"")
    message(FATAL_ERROR "bin/archfit scan --json printed no archfit.scan/1 document:\n${out}")
  endif()
endif()

# ---- a consumer project built against the installed package only -------------------------------
build_against_install("the consumer" "${CONSUMER_SOURCE_DIR}" "${consumer_build}" "${prefix}")

# The consumers find the installed library through the RUNPATH CMake gives a
# build-tree executable for an imported library, not through LD_LIBRARY_PATH.
foreach(consumer IN ITEMS consumer_c consumer_cpp)
  set(exe "${consumer_build}/${consumer}")
  execute_process(COMMAND "${READELF}" -d "${exe}" OUTPUT_VARIABLE dynamic)
  if(NOT dynamic MATCHES "\\((RPATH|RUNPATH)\\)[^\n]*\\[[^]]*${prefix_re}/lib")
    message(FATAL_ERROR "${consumer} does not look for libarchfit in ${prefix}/lib:\n${dynamic}")
  endif()
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH
                          "${exe}" "${prefix}/lib/libarchfit.so.0"
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0 OR NOT output MATCHES "${consumer}: ok")
    message(FATAL_ERROR "${consumer} failed (${result}):\n${output}")
  endif()
  message(STATUS "${output}")
endforeach()

# Which libarchfit the loader picked, where ldd is there to say.
find_program(LDD ldd)
if(LDD)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH "${LDD}" "${consumer_build}/consumer_c"
    OUTPUT_VARIABLE libraries)
  if(NOT libraries MATCHES "libarchfit\\.so\\.0 => ${prefix_re}/lib/libarchfit\\.so\\.0")
    message(FATAL_ERROR "consumer_c does not load the installed libarchfit.so.0:\n${libraries}")
  endif()
else()
  message(STATUS "ldd not found: the loaded library's path is not checked beyond the RUNPATH")
endif()

message(STATUS "install consumer: the installed SDK builds and runs a C and a C++ consumer")
