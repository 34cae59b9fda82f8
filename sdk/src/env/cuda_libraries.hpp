#pragma once
// The CUDA libraries a process could load — libcudart, libnvrtc, libcublas,
// libcublasLt, libcudnn, and on Windows cudart64_12.dll, nvrtc64_120_0.dll,
// cublas64_12.dll, cublasLt64_12.dll, cudnn64_9.dll — and where each copy
// sits: a Python wheel (site-packages/nvidia/*/lib, which torch finds through
// its RPATH; nvidia\*\bin and nvidia\cu13\bin\x86_64 on Windows, which
// torch adds to the DLL search), torch's own lib folder (Windows torch
// carries NVRTC there), the loader path (LD_LIBRARY_PATH, or PATH on
// Windows), CUDA_HOME or CUDA_PATH, /usr/local/cuda. Both families of names
// are read on either OS: a Linux archfit in WSL reads a Windows environment
// under /mnt/c.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "python_env.hpp"
#include "sys/library_loading.hpp"

namespace archfit::env {

struct CudaLibrary {
  std::string name;     // "cudart"
  std::string version;  // "12.4.127"; "13" when only the file name tells; "" when nothing does
  // Where `version` came from: "dist-info" (the wheel that installed the
  // file), "version.json" (the CUDA toolkit it sits in), "file name"; "" when
  // there is no version.
  std::string version_source;
  std::filesystem::path path;
  std::string origin;  // "wheel nvidia/cuda_runtime", "wheel torch", "LD_LIBRARY_PATH" (PATH on
                       // Windows), "CUDA_HOME", "/usr/local/cuda", "loader path"
};

struct CudaLibrarySearch {
  std::vector<std::filesystem::path> site_packages;
  // As LD_LIBRARY_PATH (on Windows PATH) lists them: sys::kLibraryPathVariable.
  std::vector<std::filesystem::path> ld_library_path;
  // CUDA_HOME or CUDA_PATH; empty if unset. Its lib64 and lib (Linux), bin
  // (Windows, CUDA 12) and bin\x64 (Windows, CUDA 13) are searched.
  std::filesystem::path cuda_home;
  std::string cuda_home_variable = "CUDA_HOME";  // which of the two named it: the copies' origin
  // sys::kDefaultCudaToolkit: /usr/local/cuda; none on Windows, whose CUDA
  // installer always sets CUDA_PATH. Empty: not searched.
  std::filesystem::path default_toolkit = sys::kDefaultCudaToolkit;
  std::vector<std::filesystem::path> loader_dirs;  // the loader's own (sys::loader_search)
};

// A folder a CUDA wheel puts libraries in — nvidia/<part>/lib (Linux),
// nvidia/<part>/bin (Windows, CUDA 12 wheels), nvidia/cu13/bin/x86_64
// (Windows, CUDA 13 wheels) — split into its site-packages and its part
// folder (nvidia/cu13, whose include/ holds the part's headers).
struct WheelLibraryDir {
  std::filesystem::path site;
  std::filesystem::path part;
};
std::optional<WheelLibraryDir> wheel_library_dir(const std::filesystem::path& dir);

// The version in a CUDA library's file name, when the name is one of
// `name`'s ("nvrtc", "cudart", …): "" for libnvrtc.so, "13.0.88" for
// libnvrtc.so.13.0.88; "12" for nvrtc64_120_0.dll and cudart64_12.dll, "11"
// for cudart64_110.dll (Windows names carry the major, and a minor digit
// when three digits are given). Nothing for libnvrtc_static.a,
// libnvrtc.alt.so, nvrtc64_120_0.alt.dll or libnvrtc.so.13x.
std::optional<std::string> library_file_version(std::string_view filename, std::string_view name);

// The search as this process's environment and /etc/ld.so.conf.d describe it.
CudaLibrarySearch default_cuda_library_search(
    const std::vector<std::filesystem::path>& site_packages);

// The site-packages of the torch loaded in this process, found from the
// file its c10 library (libc10.so, c10.dll) was loaded from
// (<site-packages>/torch/lib); none when no torch is loaded. An op inside
// ComfyUI finds the NVRTC its torch brought: nvidia/cuda_nvrtc/lib beside
// it on Linux, torch\lib\nvrtc64_*.dll on Windows.
std::vector<std::filesystem::path> site_packages_of_loaded_torch();

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
