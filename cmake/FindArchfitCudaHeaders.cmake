# Locates the CUDA toolkit for its headers (cuda.h, nvrtc.h) and, for tests,
# nvcc. Nothing here links a CUDA library: libcuda and libnvrtc are loaded at
# run time (docs/design.md, decision 1).
set(_archfit_cuda_hints "$ENV{CUDA_HOME}" "$ENV{CUDA_PATH}" /usr/local/cuda)
find_path(ARCHFIT_CUDA_INCLUDE_DIR cuda.h HINTS ${_archfit_cuda_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)
find_path(ARCHFIT_CUDA_INCLUDE_DIR cuda.h)
find_program(ARCHFIT_NVCC nvcc HINTS ${_archfit_cuda_hints} PATH_SUFFIXES bin)
if(ARCHFIT_CUDA_INCLUDE_DIR)
  get_filename_component(ARCHFIT_CUDA_ROOT "${ARCHFIT_CUDA_INCLUDE_DIR}" DIRECTORY)
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ArchfitCudaHeaders REQUIRED_VARS ARCHFIT_CUDA_INCLUDE_DIR)
if(ArchfitCudaHeaders_FOUND AND NOT TARGET archfit::cuda_headers)
  add_library(archfit::cuda_headers INTERFACE IMPORTED)
  set_target_properties(archfit::cuda_headers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${ARCHFIT_CUDA_INCLUDE_DIR}")
endif()
