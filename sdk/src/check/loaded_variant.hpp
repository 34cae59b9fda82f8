#pragma once
// Packages that ship one copy of their library per CUDA release and load only
// the one matching torch's CUDA. bitsandbytes installs
// libbitsandbytes_cuda118.so … libbitsandbytes_cuda124.so and loads
// libbitsandbytes_cuda{torch.version.cuda without the dot}.so, or the release
// BNB_CUDA_VERSION names (bitsandbytes/cextension.py). Judging the copies it
// never loads would fail an H100 on the CUDA 11.8 copy's missing sm_90.
#include <filesystem>
#include <string>
#include <vector>

#include "check.hpp"

namespace archfit::check {

// "124" for libbitsandbytes_cuda124.so (and _nocublaslt); "" for other files.
std::string bitsandbytes_cuda_of(const std::filesystem::path& binary);

// Sets `not_loaded` on each copy of `component` that a process never loads.
// `torch_cuda`: "12.4", or "" when unknown (no torch found, or a CPU build):
// then the newest copy is judged, as a current torch would load it, and a
// finding says so. A package with no copy for torch's CUDA is a finding too.
void mark_unloaded_variants(ComponentResult& component, const std::string& torch_cuda,
                            const char* bnb_cuda_version, std::vector<std::string>& findings);

}  // namespace archfit::check
