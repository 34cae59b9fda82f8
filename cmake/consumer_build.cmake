# For the cmake -P scripts that build a project against an installed SDK
# (tests/install_consumer, tests/samples).
#
# run(<what> <command> [args…]) runs a command and, when it fails, stops with
# its output and the command line. The output is left in `out`.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "${what} failed (${result}):\n  ${command}\n${output}")
  endif()
  set(out "${output}" PARENT_SCOPE)
endfunction()

# build_against_install(<what> <source> <build> <prefix>) configures <source>
# in <build> with nothing but <prefix> to satisfy find_package(archfit), checks
# that the installed package is the one found, and builds it. GENERATOR,
# MAKE_PROGRAM, C_COMPILER, CXX_COMPILER, C_FLAGS, CXX_FLAGS and
# EXE_LINKER_FLAGS, where the caller sets them, are the build tree's own
# (tests/CMakeLists.txt: ARCHFIT_CONSUMER_TOOLS).
function(build_against_install what source build prefix)
  set(args -S "${source}" -B "${build}" "-DCMAKE_PREFIX_PATH=${prefix}" -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
  if(GENERATOR)
    list(APPEND args -G "${GENERATOR}")
  endif()
  foreach(tool IN ITEMS MAKE_PROGRAM C_COMPILER CXX_COMPILER C_FLAGS CXX_FLAGS EXE_LINKER_FLAGS)
    if(${tool})
      list(APPEND args "-DCMAKE_${tool}=${${tool}}")
    endif()
  endforeach()
  run("configuring ${what}" "${CMAKE_COMMAND}" ${args})
  file(STRINGS "${build}/CMakeCache.txt" found_dir REGEX "^archfit_DIR:")
  if(NOT found_dir STREQUAL "archfit_DIR:PATH=${prefix}/lib/cmake/archfit")
    message(FATAL_ERROR "find_package(archfit) in ${what} did not use the installed package in ${prefix}: ${found_dir}")
  endif()
  run("building ${what}" "${CMAKE_COMMAND}" --build "${build}")
endfunction()
