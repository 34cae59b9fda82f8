# The samples built as their users build them: against an installed SDK only.
#
#   cmake -DSTEP=install -DARCHFIT_BUILD_DIR=<build> -DPREFIX=<dir> -P run_sample.cmake
#   cmake -DSTEP=build -DPREFIX=<dir> -DSAMPLE_DIR=<samples/x> -DWORK_DIR=<scratch>
#         [-DGENERATOR=… -DMAKE_PROGRAM=… -DC_COMPILER=… -DCXX_COMPILER=…]
#         [-DRUN="<program under WORK_DIR>;args…" -DRUN_EXIT=<code> -DEXPECT="regex;regex…"]
#         [-DCTEST=1] -P run_sample.cmake
#
# `install` installs the build tree into PREFIX (emptied first). `build`
# configures SAMPLE_DIR with only PREFIX to find archfit in, builds it, then
# runs its own tests (CTEST) and/or one program (RUN), whose exit code must
# be RUN_EXIT and whose output must match every EXPECT.
cmake_minimum_required(VERSION 3.25)

include("${CMAKE_CURRENT_LIST_DIR}/../../cmake/consumer_build.cmake")

if(STEP STREQUAL "install")
  file(REMOVE_RECURSE "${PREFIX}")
  run("cmake --install" "${CMAKE_COMMAND}" --install "${ARCHFIT_BUILD_DIR}" --prefix "${PREFIX}")
  message(STATUS "installed ${ARCHFIT_BUILD_DIR} into ${PREFIX}")
  return()
endif()

if(NOT STEP STREQUAL "build")
  message(FATAL_ERROR "STEP must be install or build, not '${STEP}'")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
build_against_install("${SAMPLE_DIR}" "${SAMPLE_DIR}" "${WORK_DIR}" "${PREFIX}")

# The installed library, found through the RUNPATH CMake gives, never the build tree's.
set(clean_env "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH --unset=ARCHFIT_PLUGIN_PATH)
if(CTEST)
  run("the sample's own tests" ${clean_env} "${CMAKE_CTEST_COMMAND}" --test-dir "${WORK_DIR}"
      --output-on-failure)
  message(STATUS "${out}")
endif()
if(RUN)
  list(POP_FRONT RUN program)
  execute_process(COMMAND ${clean_env} "${WORK_DIR}/${program}" ${RUN}
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  message(STATUS "${program} exited ${result}:\n${output}")
  if(NOT result STREQUAL "${RUN_EXIT}")
    message(FATAL_ERROR "${program} exited ${result}, not ${RUN_EXIT}")
  endif()
  foreach(pattern IN LISTS EXPECT)
    if(NOT output MATCHES "${pattern}")
      message(FATAL_ERROR "${program}'s output does not match: ${pattern}")
    endif()
  endforeach()
endif()
