# `cmake --install` gives a usable SDK: headers, libarchfit.so with its
# SONAME, the archfit command and a CMake package for find_package(archfit CONFIG).
include(CMakePackageConfigHelpers)

set(ARCHFIT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/archfit" CACHE STRING "Where the CMake package goes")

install(TARGETS archfit EXPORT archfit-targets
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT runtime NAMELINK_COMPONENT development
  PUBLIC_HEADER DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/archfit" COMPONENT development)
if(TARGET archfit_cli)
  install(TARGETS archfit_cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT runtime)
endif()
# Plugins are loaded only in this helper; libarchfit.so and the command find
# it in ../libexec/archfit beside their own folder (src/plugin/probe_helper.hpp).
install(TARGETS archfit_plugin_probe RUNTIME DESTINATION "${CMAKE_INSTALL_LIBEXECDIR}/archfit"
  COMPONENT runtime)
# The knowledge base (YAML); kb/ finds it from the installed binaries.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/sdk/data/kb/" DESTINATION "${CMAKE_INSTALL_DATADIR}/archfit/kb"
  COMPONENT runtime FILES_MATCHING PATTERN "*.yaml" PATTERN "README.md")
# archfit::torch: the libtorch adapter's header, whatever libtorch this build found.
install(TARGETS archfit_torch EXPORT archfit-targets)
install(FILES "${PROJECT_SOURCE_DIR}/host_adapters/libtorch/include/archfit/torch.hpp"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/archfit" COMPONENT development)
install(EXPORT archfit-targets NAMESPACE archfit:: DESTINATION "${ARCHFIT_INSTALL_CMAKEDIR}" COMPONENT development)

configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/archfit-config.cmake.in"
  "${PROJECT_BINARY_DIR}/archfit-config.cmake" INSTALL_DESTINATION "${ARCHFIT_INSTALL_CMAKEDIR}")
# The ABI changes only with the major version.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/archfit-config-version.cmake"
  COMPATIBILITY SameMajorVersion)
install(FILES "${PROJECT_BINARY_DIR}/archfit-config.cmake" "${PROJECT_BINARY_DIR}/archfit-config-version.cmake"
  DESTINATION "${ARCHFIT_INSTALL_CMAKEDIR}" COMPONENT development)

# The host adapters (docs/comfyui.md): the ComfyUI node pack with the Python
# binding it vendors (where `archfit install comfyui` finds them), and the
# InvokeAI node pack. Python sources only; __pycache__ is never installed.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/host_adapters/comfyui/"
  DESTINATION "${CMAKE_INSTALL_DATADIR}/archfit/comfyui" COMPONENT comfyui
  PATTERN "__pycache__" EXCLUDE)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/host_adapters/python/archfit/"
  DESTINATION "${CMAKE_INSTALL_DATADIR}/archfit/python/archfit" COMPONENT comfyui
  PATTERN "__pycache__" EXCLUDE)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/host_adapters/invokeai/archfit_preflight"
  DESTINATION "${CMAKE_INSTALL_DATADIR}/archfit/invokeai" COMPONENT invokeai
  PATTERN "__pycache__" EXCLUDE)
