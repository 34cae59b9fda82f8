#pragma once
// The CUDA libraries a process could load — libcudart, libnvrtc, libcublas,
// libcublasLt, libcudnn — and where each copy sits: a Python wheel
// (site-packages/nvidia/*/lib, which torch finds through its RPATH), the
// loader path, CUDA_HOME, /usr/local/cuda.
#include <filesystem>
#include <string>
#include <vector>

namespace archfit::env {

struct CudaLibrary {
  std::string name;     // "cudart"
  std::string version;  // from the file name: "13", "12.8.90"; "" for an unversioned .so
  std::filesystem::path path;
  std::string origin;  // "wheel nvidia/cuda_runtime", "LD_LIBRARY_PATH", "CUDA_HOME",
                       // "/usr/local/cuda", "loader path"
};

struct CudaLibrarySearch {
  std::vector<std::filesystem::path> site_packages;
  std::vector<std::filesystem::path> ld_library_path;  // as LD_LIBRARY_PATH lists them
  std::filesystem::path cuda_home;                     // CUDA_HOME or CUDA_PATH; empty if unset
  std::filesystem::path default_toolkit = "/usr/local/cuda";  // empty: not searched
  std::vector<std::filesystem::path> loader_dirs;  // from /etc/ld.so.conf.d and the defaults
};

// The search as this process's environment and /etc/ld.so.conf.d describe it.
CudaLibrarySearch default_cuda_library_search(
    const std::vector<std::filesystem::path>& site_packages);

// Every copy of each library, in search order, one entry per real file.
std::vector<CudaLibrary> find_cuda_libraries(const CudaLibrarySearch& search);

}  // namespace archfit::env
