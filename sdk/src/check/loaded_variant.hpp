#pragma once
// Components that ship one copy of their library per CUDA release and load
// only the one matching torch's CUDA (the knowledge base's
// `library_per_cuda`; bitsandbytes installs libbitsandbytes_cuda118.so …
// libbitsandbytes_cuda124.so). Judging the copies it never loads would fail
// an H100 on the CUDA 11.8 copy's missing sm_90.
#include <filesystem>
#include <string>
#include <vector>

#include "check.hpp"
#include "kb/knowledge_base.hpp"

namespace archfit::check {

// "124" for libbitsandbytes_cuda124.so (and _nocublaslt.so) under the
// pattern "libbitsandbytes_cuda{cuda}"; "" for other files.
std::string cuda_release_of_copy(const std::filesystem::path& binary, const std::string& pattern);

// Marks unreached, saying why, each copy of `component` that a process never loads.
// `torch_cuda`: "12.4", or "" when unknown (no torch found, or a CPU build):
// then the newest copy is judged, as a current torch would load it, and a
// finding says so. A component with no copy for torch's CUDA is a finding too.
void mark_unloaded_variants(ComponentResult& component, const kb::Component& knowledge,
                            const std::string& torch_cuda, std::vector<std::string>& findings);

}  // namespace archfit::check
