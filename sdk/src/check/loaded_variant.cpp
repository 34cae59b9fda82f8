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

void mark_unloaded_variants(ComponentResult& component, const std::string& torch_cuda,
                            const char* bnb_cuda_version, std::vector<std::string>& findings) {
  // The CUDA releases of the copies present, as numbers ("124" → 124).
  int newest = -1;
  for (const auto& binary : component.binaries) {
    if (const std::string cuda = bitsandbytes_cuda_of(binary.path); !cuda.empty())
      newest = std::max(newest, std::stoi(cuda));
  }
  if (newest < 0) return;

  const bool overridden = bnb_cuda_version && *bnb_cuda_version;
  std::string loaded = overridden ? bnb_cuda_version : torch_cuda;
  loaded.erase(std::remove(loaded.begin(), loaded.end(), '.'), loaded.end());
  std::string because;
  if (overridden) {
    because = "for CUDA " + std::string(bnb_cuda_version) + " (BNB_CUDA_VERSION)";
  } else if (!loaded.empty()) {
    because = "for torch's CUDA " + torch_cuda;
  } else {
    loaded = std::to_string(newest);
    because = "as with a torch for CUDA " + loaded + " (no torch here says which)";
    findings.push_back(component.component.name +
                       " loads one of its libraries by torch's CUDA "
                       "release, which is not known here; it was judged on its newest, "
                       "libbitsandbytes_cuda" +
                       loaded + ".so");
  }

  bool one_loads = false;
  for (auto& binary : component.binaries) {
    const std::string cuda = bitsandbytes_cuda_of(binary.path);
    if (cuda.empty()) continue;
    if (cuda == loaded) {
      one_loads = true;
    } else {
      binary.not_loaded = component.component.name + " loads libbitsandbytes_cuda" + loaded +
                          ".so " + because + ", never this copy";
    }
  }
  if (!one_loads) {
    findings.push_back(component.component.name + " " + component.component.version +
                       " has no library " + because +
                       "; it will run on the CPU only or fail to load");
  }
}

}  // namespace archfit::check
