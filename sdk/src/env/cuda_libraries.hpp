#pragma once
// The CUDA libraries a process could load — libcudart, libnvrtc, libcublas,
// libcublasLt, libcudnn — and where each copy sits: a Python wheel
// (site-packages/nvidia/*/lib, which torch finds through its RPATH), the
// loader path, CUDA_HOME, /usr/local/cuda.
#include <filesystem>
#include <string>
#include <vector>

#include "python_env.hpp"

namespace archfit::env {

struct CudaLibrary {
  std::string name;     // "cudart"
  std::string version;  // "12.4.127"; "13" when only the file name tells; "" when nothing does
  // Where `version` came from: "dist-info" (the wheel that installed the
  // file), "version.json" (the CUDA toolkit it sits in), "file name"; "" when
  // there is no version.
  std::string version_source;
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

// Every directory whose listing find_cuda_libraries(search) reads: the places
// libraries are looked for, site-packages (their dist-info) and nvidia/, and
// the toolkit roots (their version.json). A copy added, removed or replaced
// by rename in any of them changes that directory's modification time.
std::vector<std::filesystem::path> searched_directories(const CudaLibrarySearch& search);

// Every copy of each library, in search order, one entry per real file.
// Files are read, never loaded. A copy in site-packages/nvidia/<part>/lib
// takes the version of the distribution whose RECORD lists it; one in a
// toolkit (a directory whose parent, or <root> of <root>/targets/<triple>/lib,
// has version.json) takes its component's version from there; any other the
// version in its file name. Either only when its major matches the file
// name's. `known_sites`: site-packages already read, so that their dist-info
// is not read again.
std::vector<CudaLibrary> find_cuda_libraries(const CudaLibrarySearch& search,
                                             const std::vector<SitePackages>& known_sites = {});

}  // namespace archfit::env
