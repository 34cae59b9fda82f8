#include "loaded_variant.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace archfit::check {

std::string cuda_release_of_copy(const std::filesystem::path& binary, const std::string& pattern) {
  const std::string prefix = pattern.substr(0, pattern.find("{cuda}"));
  const std::string name = binary.filename().string();
  if (prefix.empty() || name.compare(0, prefix.size(), prefix) != 0) return {};
  size_t end = prefix.size();
  while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
  // Three or four digits ("118", "1210"), then the rest of a shared
  // library's name: ".so" on Linux, ".dll" on Windows.
  if (end - prefix.size() < 3 || end - prefix.size() > 4) return {};
  if (name.find(".so", end) == std::string::npos && name.find(".dll", end) == std::string::npos)
    return {};
  return name.substr(prefix.size(), end - prefix.size());
}

void mark_unloaded_variants(ComponentResult& component, const kb::Component& knowledge,
                            const std::string& torch_cuda, std::vector<std::string>& findings) {
  const std::string& pattern = knowledge.library_per_cuda;
  if (pattern.empty()) return;
  int newest = -1;
  for (const auto& binary : component.binaries) {
    if (const std::string cuda = cuda_release_of_copy(binary.path, pattern); !cuda.empty())
      newest = std::max(newest, std::stoi(cuda));
  }
  if (newest < 0) return;
  // The copies' own suffix, to name the one that loads.
  std::string suffix = ".so";
  for (const auto& binary : component.binaries) {
    if (!cuda_release_of_copy(binary.path, pattern).empty() && binary.path.extension() == ".dll")
      suffix = ".dll";
  }

  const char* override_value = knowledge.cuda_override_env.empty()
                                   ? nullptr
                                   : std::getenv(knowledge.cuda_override_env.c_str());
  const bool overridden = override_value && *override_value;
  std::string loaded = overridden ? override_value : torch_cuda;
  loaded.erase(std::remove(loaded.begin(), loaded.end(), '.'), loaded.end());
  const auto library = [&](const std::string& cuda) {
    std::string name = pattern;
    return name.replace(name.find("{cuda}"), 6, cuda) + suffix;
  };
  std::string because;
  if (overridden) {
    because = "for CUDA " + std::string(override_value) + " (" + knowledge.cuda_override_env + ")";
  } else if (!loaded.empty()) {
    because = "for torch's CUDA " + torch_cuda;
  } else {
    loaded = std::to_string(newest);
    because = "as with a torch for CUDA " + loaded + " (no torch here says which)";
    findings.push_back(component.component.name +
                       " loads one of its libraries by torch's CUDA release, which is not known "
                       "here; it was judged on its newest, " +
                       library(loaded));
  }

  bool one_loads = false;
  for (auto& binary : component.binaries) {
    const std::string cuda = cuda_release_of_copy(binary.path, pattern);
    if (cuda.empty()) continue;
    if (cuda == loaded) {
      one_loads = true;
    } else {
      binary.reach = Reach::unreached;
      binary.reach_reason = component.component.name + " loads " + library(loaded) + " " + because +
                            ", never this copy";
    }
  }
  if (!one_loads) {
    findings.push_back(component.component.name + " " + component.component.version +
                       " has no library " + because +
                       "; it will run on the CPU only or fail to load");
  }
}

}  // namespace archfit::check
