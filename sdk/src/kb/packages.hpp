#pragma once
// packages.yaml: how CUDA packages are installed, moved and reached — what a
// stack is, which wheels only supply libraries to others, which libraries a
// library opens itself, and which hold kernels for one feature only. check/
// weighs every binary by these.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compat/arch.hpp"
#include "provenance.hpp"

namespace archfit::kb {

using ComputeCapability = compat::ComputeCapability;

// Distribution patterns are globs over names as pip compares them
// ("nvidia-*"); library patterns are globs over a file name, or over the
// path relative to site-packages when they hold a '/'.
struct SupplierRule {
  std::vector<std::string> distributions;
  bool binary_only = false;  // no source to build from
  Provenance provenance;
};

struct StackRule {
  std::string name;    // "PyTorch"
  std::string anchor;  // "torch": the distribution whose build the fix picks
  std::vector<std::string>
      members;  // moved with it when installed: torchvision, torchaudio, triton
  Provenance provenance;
};

struct FeatureLibrary {
  std::string library;  // "libcusparseLt*.so*"
  std::string feature;  // what stops working without an image for the GPU
  // The GPUs the feature exists on at all (FlashAttention-3: 9.0 only); a
  // GPU outside loses nothing. Open ends: every GPU.
  std::optional<ComputeCapability> min_cc, max_cc;
  Provenance provenance;

  bool exists_on(ComputeCapability cc) const {
    return (!min_cc || !(cc < *min_cc)) && (!max_cc || !(*max_cc < cc));
  }
};

struct OpensRule {
  std::string library;             // "libcudnn.so.*"
  std::vector<std::string> opens;  // "libcudnn_*.so.*", looked for in its own folder
  Provenance provenance;
};

// Folders a package adds to its process's DLL search on Windows
// (os.add_dll_directory): globs over a folder's path relative to
// site-packages ("torch/lib", "nvidia/*/bin").
struct DllDirectories {
  std::string package;  // "torch"
  std::vector<std::string> folders;
  Provenance provenance;
};

// Libraries a package installs that other packages' binaries link by name
// (libcudart.so.12, cudart64_12.dll): one linked but in neither the
// environment nor the loader's own folders stops the binary from loading.
struct ProvidedLibrary {
  std::vector<std::string> libraries;  // file names, as DT_NEEDED or an import names them
  std::string distribution;            // what installs them: "nvidia-cuda-runtime-cu12"
  std::string requirement;             // what a fix installs: "nvidia-cuda-runtime==13.*"
  Provenance provenance;
};

// Distributions named by fnmatch patterns over normalized names, with the
// source that says why they belong in the list.
struct DistributionList {
  std::vector<std::string> distributions;
  Provenance provenance;
};
using BinaryOnlyRule = DistributionList;

// A framework published as a CUDA distribution and a CPU-only one that
// install the same import package (onnxruntime-gpu and onnxruntime): the CPU
// one installed after the CUDA one overwrites `core` and CUDA is gone;
// installed alone where a package requires the CUDA one, it is not the build
// that package needs.
struct CpuTwin {
  std::string name;  // "ONNX Runtime"
  std::string cuda;  // "onnxruntime-gpu", as pip compares names
  std::string cpu;   // "onnxruntime"
  // The module both write, relative to site-packages (a glob):
  // "onnxruntime/capi/onnxruntime_pybind11_state*". Whose it is on disk
  // tells which of the two was installed last.
  std::string core;
  Provenance provenance;
};

class Packages {
 public:
  std::vector<SupplierRule> suppliers;
  std::vector<StackRule> stacks;
  std::vector<FeatureLibrary> features;
  std::vector<OpensRule> opens;
  std::vector<BinaryOnlyRule> binary_only;
  // Python frames that only pass calls on (pure Python, no CUDA code of
  // their own): an error raised through them comes from what they called.
  std::vector<DistributionList> pass_through;
  // Hosts that call every component: a frame in them names no culprit.
  std::vector<DistributionList> hosts;
  std::vector<CpuTwin> cpu_twins;
  std::vector<DllDirectories> dll_directories;
  std::vector<ProvidedLibrary> provided_libraries;

  // `key` is a normalized distribution name. nullptr when none matches.
  const SupplierRule* supplier(std::string_view key) const;
  // The stack whose anchor or member `key` is; nullptr when none.
  const StackRule* stack_of(std::string_view key) const;
  // No source distribution a fix could build: a supplier marked so, or a
  // binary_only entry.
  bool is_binary_only(std::string_view key) const;
  bool passes_through(std::string_view key) const;
  bool is_host(std::string_view key) const;
  // The feature a library's kernels serve alone; nullptr for a library on the
  // normal path. `relative` is its path relative to site-packages (or just
  // its name when it is not in one).
  const FeatureLibrary* feature_of(const std::filesystem::path& relative) const;
  // The twin whose CUDA distribution is `key`; nullptr when none.
  const CpuTwin* cpu_twin_of(std::string_view key) const;
  // Whether a folder, as a path relative to site-packages, is one a package
  // adds to the DLL search on Windows.
  bool is_added_dll_directory(std::string_view relative_folder) const;
  // What installs a library of this file name; nullptr when no package
  // is known to (the system's own: libc.so.6, KERNEL32.dll).
  const ProvidedLibrary* provider_of(std::string_view file_name) const;
  // The name patterns a library of this file name opens in its own folder.
  std::vector<std::string> opened_by(std::string_view file_name) const;
};

// A shell glob over the whole text, as fnmatch(3) with no flags matches it
// (kb/glob.cpp: Windows has no fnmatch).
bool glob_matches(std::string_view pattern, std::string_view text);

}  // namespace archfit::kb
