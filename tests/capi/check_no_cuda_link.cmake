# libarchfit.so must start on a machine with no driver and a broken CUDA
# install (docs/design.md, decision 1), so it may not link libcuda, libcudart or
# libnvrtc: those are loaded at run time. Fails naming the library it needs.
#
#   cmake -DLIBRARY=<libarchfit.so> -DREADELF=<readelf> -P check_no_cuda_link.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT LIBRARY OR NOT EXISTS "${LIBRARY}")
  message(FATAL_ERROR "LIBRARY='${LIBRARY}' does not exist")
endif()
if(NOT READELF)
  find_program(READELF readelf REQUIRED)
endif()
execute_process(COMMAND "${READELF}" -d "${LIBRARY}" RESULT_VARIABLE result OUTPUT_VARIABLE dynamic)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${READELF} -d ${LIBRARY} failed (${result})")
endif()
string(REGEX MATCHALL "Shared library: \\[[^]]+\\]" needed "${dynamic}")
if(NOT needed)
  message(FATAL_ERROR "${LIBRARY} lists no NEEDED libraries: readelf output not understood")
endif()
foreach(entry IN LISTS needed)
  if(entry MATCHES "lib(cuda|cudart|nvrtc)\\.so")
    message(FATAL_ERROR "${LIBRARY} links ${entry}; CUDA libraries must be loaded at run time")
  endif()
endforeach()
message(STATUS "${LIBRARY} needs: ${needed}")
