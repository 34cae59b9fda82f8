#pragma once
// Where the files a host adapter is made of are on this machine: the
// ComfyUI node pack, the Python binding, libarchfit.so and the knowledge
// base. Looked for beside the running `archfit` as `cmake --install` lays
// them out (<prefix>/bin/archfit, <prefix>/share/archfit/{comfyui,python},
// <prefix>/lib/libarchfit.so.N), as the wheel does (site-packages/archfit/
// is the prefix and the binding itself), then in the build tree it came from.
#include <filesystem>
#include <stdexcept>

namespace archfit::cli {

struct HostAdapterFiles {
  std::filesystem::path comfyui_pack;    // the node pack's folder (__init__.py, web/)
  std::filesystem::path python_binding;  // the `archfit` package folder
  std::filesystem::path library;         // libarchfit.so.<major>, or the file it names
  std::filesystem::path kb;              // the knowledge-base folder
  std::filesystem::path plugin_probe;    // archfit-plugin-probe, where plugins load
  // A repaired wheel's archfit.libs (the libraries auditwheel vendored, which
  // the library's RPATH finds at $ORIGIN/../../archfit.libs); empty elsewhere.
  std::filesystem::path bundled_libraries;
};

// Throws std::runtime_error naming what is missing and every place looked.
HostAdapterFiles find_host_adapter_files();

}  // namespace archfit::cli
