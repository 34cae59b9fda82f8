#include "loaded_variant.hpp"

#include <algorithm>
#include <regex>

namespace archfit::check {

std::string bitsandbytes_cuda_of(const std::filesystem::path& binary) {
  static const std::regex pattern(R"(libbitsandbytes_cuda(\d{3,4})(_nocublaslt)?\.so)");
  const std::string name = binary.filename().string();
  std::smatch match;
  return std::regex_match(name, match, pattern) ? match[1].str() : std::string();
}

std::optional<std::string> unloaded_variant(const std::filesystem::path& binary,
                                            const std::string& torch_cuda,
                                            const char* bnb_cuda_version_override) {
  const std::string cuda = bitsandbytes_cuda_of(binary);
  if (cuda.empty()) return std::nullopt;
  std::string loaded = bnb_cuda_version_override && *bnb_cuda_version_override
                           ? bnb_cuda_version_override
                           : torch_cuda;
  loaded.erase(std::remove(loaded.begin(), loaded.end(), '.'), loaded.end());
  if (loaded.empty() || loaded == cuda) return std::nullopt;
  return "bitsandbytes loads libbitsandbytes_cuda" + loaded + ".so for CUDA " +
         (bnb_cuda_version_override && *bnb_cuda_version_override
              ? std::string(bnb_cuda_version_override) + " (BNB_CUDA_VERSION)"
              : torch_cuda + " (torch's CUDA)") +
         ", never this copy";
}

}  // namespace archfit::check
