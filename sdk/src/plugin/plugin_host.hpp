#pragma once
// Finding and loading plugins (archfit_plugin.h): manifests in the search
// path, each library loaded with Boost.DLL (rtld_now | rtld_local), the ABI
// negotiated, everything it offers copied out, and the library unloaded
// again — nothing a plugin made outlives it. A plugin that cannot be used
// is rejected with its path and the reason, and the others load on.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "archfit/archfit_plugin.h"
#include "jit/kernel_module.hpp"
#include "manifest.hpp"

namespace archfit::plugin {

struct LoadedPlugin {
  Manifest manifest;
  uint32_t abi = 0;  // the version negotiated
  std::string name;
  std::string version;
  std::string description;
  std::vector<jit::KernelModuleSpec> modules;  // copies of what it offered
  std::string probe_json;                      // its probe's JSON object; "" without one
  double milliseconds = 0;                     // loading, negotiating, copying, unloading
};

struct RejectedPlugin {
  std::filesystem::path path;  // the manifest, or the library when it got that far
  std::string reason;          // a sentence
};

struct PluginSet {
  std::vector<std::filesystem::path> searched;  // the directories, in order
  std::vector<LoadedPlugin> loaded;             // in the order found
  std::vector<RejectedPlugin> rejected;
};

struct PluginSearch {
  std::vector<std::filesystem::path> paths;  // the host's own, searched first
  bool environment = true;                   // then ARCHFIT_PLUGIN_PATH (':'-separated)
  bool install_dir = true;                   // then <prefix>/lib/archfit/plugins
  uint32_t abi_min = ARCHFIT_PLUGIN_ABI_MIN;  // the versions this host speaks
  uint32_t abi_max = ARCHFIT_PLUGIN_ABI_MAX;
};

// The directories `search` names that exist, each once.
std::vector<std::filesystem::path> plugin_directories(const PluginSearch& search);

// Manifests (*.archfit-plugin.yaml) in `dir` and its immediate subfolders,
// sorted by path.
std::vector<std::filesystem::path> find_manifests(const std::filesystem::path& dir);

// Loads one plugin from its manifest; throws PluginError with the reason.
LoadedPlugin load_plugin(const std::filesystem::path& manifest, uint32_t abi_min,
                         uint32_t abi_max);

// Every plugin in the search path; a second plugin of a name already loaded
// is rejected. Never throws for a bad plugin.
PluginSet load_plugins(const PluginSearch& search);

}  // namespace archfit::plugin
