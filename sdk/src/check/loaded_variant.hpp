#pragma once
// Packages that ship one copy of their library per CUDA release and load only
// the one matching torch's CUDA. bitsandbytes installs
// libbitsandbytes_cuda118.so … libbitsandbytes_cuda124.so and loads
// libbitsandbytes_cuda{torch.version.cuda without the dot}.so, or the release
// BNB_CUDA_VERSION names (bitsandbytes/cextension.py). Judging the copies it
// never loads would fail an H100 on the CUDA 11.8 copy's missing sm_90.
#include <filesystem>
#include <optional>
#include <string>

namespace archfit::check {

// Why `binary` is never loaded by a process whose torch was built for
// `torch_cuda` ("12.4"); nullopt when it may be loaded, or when the CUDA
// release is unknown ("" : a CPU build, or no torch found).
std::optional<std::string> unloaded_variant(const std::filesystem::path& binary,
                                            const std::string& torch_cuda,
                                            const char* bnb_cuda_version_override);

// "124" for the library libbitsandbytes_cuda124.so (and _nocublaslt); "" for
// any other file.
std::string bitsandbytes_cuda_of(const std::filesystem::path& binary);

}  // namespace archfit::check
