#include "library_needs.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <system_error>

#include "sys/utf8_path.hpp"

namespace archfit::check {

namespace fs = std::filesystem;

namespace {

bool is_dll_name(std::string_view name) {
  if (name.size() < 4) return false;
  std::string suffix(name.substr(name.size() - 4));
  std::transform(suffix.begin(), suffix.end(), suffix.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return suffix == ".dll";
}

// The first folder of `folders` that holds a file of this name.
std::optional<fs::path> folder_holding(const std::vector<fs::path>& folders,
                                       const std::string& name) {
  for (const auto& folder : folders) {
    std::error_code error;
    if (fs::exists(folder / sys::path_of_utf8(name), error)) return folder;
  }
  return std::nullopt;
}

}  // namespace

LibraryNeeds library_needs(const std::vector<size_t>& files_to_check, const LinkGraph& graph,
                           const kb::Packages& packages, const sys::LoaderSearch& loader,
                           const std::function<std::string(size_t)>& shown) {
  LibraryNeeds needs;
  std::set<std::string> said;
  for (const size_t file : files_to_check) {
    for (const auto& name : graph.unresolved(file)) {
      const kb::ProvidedLibrary* provider = packages.provider_of(name);
      if (!provider || said.contains(name)) continue;
      if (!is_dll_name(name)) {
        if (folder_holding(loader.system_dirs, name)) continue;  // the system's copy: it loads
        if (const auto folder = folder_holding(loader.variable_dirs, name)) {
          said.insert(name);
          needs.findings.push_back(shown(file) + " loads " + name + " from " +
                                   sys::utf8_of(*folder) + " only because " +
                                   sys::kLibraryPathVariable +
                                   " names that folder: a process started without it will not "
                                   "load " +
                                   shown(file) + " (" + provider->distribution + " installs " +
                                   name + " into the environment)");
          continue;
        }
      }
      said.insert(name);
      needs.missing.push_back({name, shown(file), provider->distribution, provider->requirement});
    }
  }
  return needs;
}

}  // namespace archfit::check
