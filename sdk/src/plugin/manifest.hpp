#pragma once
// A plugin's manifest (<name>.archfit-plugin.yaml, archfit_plugin.h): read
// before its library is touched, so a plugin for another plugin ABI, or one
// whose library is missing, is refused without loading anything.
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace archfit::plugin {

inline constexpr const char* kManifestSuffix = ".archfit-plugin.yaml";
inline constexpr const char* kManifestSchema = "archfit.plugin/1";

// A plugin that is refused; what() is the reason, without the path.
class PluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Manifest {
  std::filesystem::path path;     // the manifest file
  std::string name;               // "imagegen_ops"
  std::filesystem::path library;  // absolute: the manifest's directory / `library`
  uint32_t abi_min = 0;           // `abi: 1` or `abi: [1, 2]`
  uint32_t abi_max = 0;
};

// Throws PluginError naming the field that is missing or wrong (and the
// line, for YAML that does not parse). Does not check that the library exists.
Manifest read_manifest(const std::filesystem::path& path);

}  // namespace archfit::plugin
