#include "packages.hpp"

#include <algorithm>
#include <cctype>

namespace archfit::kb {

namespace {

bool any_matches(const std::vector<std::string>& patterns, std::string_view text) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& pattern) { return glob_matches(pattern, text); });
}

}  // namespace

const SupplierRule* Packages::supplier(std::string_view key) const {
  for (const auto& rule : suppliers) {
    if (any_matches(rule.distributions, key)) return &rule;
  }
  return nullptr;
}

const StackRule* Packages::stack_of(std::string_view key) const {
  for (const auto& stack : stacks) {
    if (stack.anchor == key ||
        std::find(stack.members.begin(), stack.members.end(), key) != stack.members.end())
      return &stack;
  }
  return nullptr;
}

bool Packages::is_binary_only(std::string_view key) const {
  if (const auto* rule = supplier(key); rule && rule->binary_only) return true;
  return std::any_of(binary_only.begin(), binary_only.end(), [&](const BinaryOnlyRule& rule) {
    return any_matches(rule.distributions, key);
  });
}

namespace {

bool listed(const std::vector<DistributionList>& lists, std::string_view key) {
  return std::any_of(lists.begin(), lists.end(), [&](const DistributionList& list) {
    return any_matches(list.distributions, key);
  });
}

}  // namespace

bool Packages::passes_through(std::string_view key) const { return listed(pass_through, key); }

bool Packages::is_host(std::string_view key) const { return listed(hosts, key); }

const FeatureLibrary* Packages::feature_of(const std::filesystem::path& relative) const {
  const std::string name = relative.filename().string();
  const std::string path = relative.generic_string();
  for (const auto& feature : features) {
    const bool by_path = feature.library.find('/') != std::string::npos;
    if (glob_matches(feature.library, by_path ? path : name)) return &feature;
  }
  return nullptr;
}

const ProvidedLibrary* Packages::provider_of(std::string_view file_name) const {
  // Windows compares file names without case: an import may say CUDART64_12.DLL.
  const auto same = [file_name](const std::string& library) {
    if (!library.ends_with(".dll")) return library == file_name;
    return std::equal(library.begin(), library.end(), file_name.begin(), file_name.end(),
                      [](char a, char b) {
                        return std::tolower(static_cast<unsigned char>(a)) ==
                               std::tolower(static_cast<unsigned char>(b));
                      });
  };
  for (const auto& provided : provided_libraries) {
    if (std::any_of(provided.libraries.begin(), provided.libraries.end(), same)) return &provided;
  }
  return nullptr;
}

std::vector<std::string> Packages::opened_by(std::string_view file_name) const {
  std::vector<std::string> patterns;
  for (const auto& rule : opens) {
    if (glob_matches(rule.library, file_name))
      patterns.insert(patterns.end(), rule.opens.begin(), rule.opens.end());
  }
  return patterns;
}

const CpuTwin* Packages::cpu_twin_of(std::string_view key) const {
  for (const auto& twin : cpu_twins) {
    if (twin.cuda == key) return &twin;
  }
  return nullptr;
}

bool Packages::is_added_dll_directory(std::string_view relative_folder) const {
  return std::any_of(
      dll_directories.begin(), dll_directories.end(),
      [&](const DllDirectories& rule) { return any_matches(rule.folders, relative_folder); });
}

}  // namespace archfit::kb
