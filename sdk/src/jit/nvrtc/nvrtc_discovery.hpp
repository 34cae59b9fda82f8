#pragma once
// Where libnvrtc may be, and which copy to try first (docs/op-author-guide.md,
// "Which NVRTC").
// Files are listed and their versions read (through env/cuda_libraries),
// never loaded here; nvrtc.hpp loads them.
#include <filesystem>
#include <string>
#include <vector>

#include "env/cuda_libraries.hpp"
#include "sys/library_loading.hpp"

namespace archfit::jit {

// The places searched, in this order. Each field is one kind of place;
// empty ones are not searched. Windows spellings in brackets.
struct NvrtcSearch {
  std::filesystem::path archfit_nvrtc;  // ARCHFIT_NVRTC: an NVRTC library file or a directory
  // CUDA_HOME, else CUDA_PATH: its lib64 and lib [bin, bin\x64]
  std::filesystem::path cuda_home;
  std::string cuda_home_variable = "CUDA_HOME";        // or "CUDA_PATH": the origin it gives
  std::vector<std::filesystem::path> ld_library_path;  // LD_LIBRARY_PATH [PATH], in its order
  std::vector<std::filesystem::path> loader_dirs;      // /etc/ld.so.conf.d, then the defaults
  // site-packages: nvidia/cu13/lib, nvidia/cuda_nvrtc/lib (any nvidia/*/lib)
  // [nvidia\cuda_nvrtc\bin, nvidia\cu13\bin\x86_64], torch/lib [torch\lib]
  std::vector<std::filesystem::path> site_packages;
  std::filesystem::path default_toolkit = sys::kDefaultCudaToolkit;  // /usr/local/cuda [none]
};

// The search for `archfit_nvrtc` (ARCHFIT_NVRTC as the one reader of the
// environment, session/environment_settings.hpp, read it; empty: none) over
// the loader's places (`loader`: CUDA_HOME, LD_LIBRARY_PATH, the loader's
// folders, the site-packages).
NvrtcSearch nvrtc_search_over(const std::filesystem::path& archfit_nvrtc,
                              const env::CudaLibrarySearch& loader);

struct NvrtcCandidate {
  std::filesystem::path path;
  // "12.4.127" from the wheel's dist-info or the toolkit's version.json;
  // else the library's own identification string; else the file name's
  // ("13", "12.8.93"); "" when nothing tells.
  std::string version;
  std::string version_source;  // "dist-info", "version.json", "library", "file name", ""
  std::string origin;          // "ARCHFIT_NVRTC", "CUDA_HOME" (or "CUDA_PATH"), "LD_LIBRARY_PATH"
                               // (or "PATH"), "loader path", "wheel torch",
                               // "wheel nvidia/cu13", "/usr/local/cuda"
};

// Every directory find_nvrtc(search) lists or reads a version from, in its
// order, and ARCHFIT_NVRTC itself: what a record of a discovery depends on.
std::vector<std::filesystem::path> nvrtc_search_directories(const NvrtcSearch& search);

// Every libnvrtc.so* [nvrtc64_*.dll] real file once (a symlink or a second spelling of a
// directory already seen adds nothing), best first: the newest version, and
// of equal versions the first in search order. A copy whose version has
// fewer than three parts (a file name's "13") takes read_nvrtc_release's,
// with version_source "library", where the file has one. Versions compare
// numerically part by part, a missing part counting as 0: "13" ranks below
// "13.0.88". Files that are not libraries are listed too: loading them
// fails and says why.
std::vector<NvrtcCandidate> find_nvrtc(const NvrtcSearch& search);

// "13.0.88": the release in the identification string libnvrtc carries in
// its .rodata ("Cuda compilation tools, release 13.0, V13.0.88", the line
// NVRTC also writes into every PTX). The file is read, not loaded: the ELF
// section table, then .rodata in 1 MiB pieces (13 MB, about 3 ms from the
// page cache, for NVRTC 13.0). "" for a file that is not a 64-bit ELF or
// has no such string.
std::string read_nvrtc_release(const std::filesystem::path& library);

// -1, 0 or 1; "12.10" is newer than "12.9".
int compare_versions(const std::string& a, const std::string& b);

}  // namespace archfit::jit
