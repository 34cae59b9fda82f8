#pragma once
// Finding and loading plugins (archfit_plugin.h): manifests in the search
// path, read and trust-checked here; then, in archfit-plugin-probe, a helper
// started with posix_spawn (probe_helper.hpp), each library loaded with
// Boost.DLL (rtld_now | rtld_local), the ABI negotiated, everything it
// offers (and its probe's answer) copied out and sent back. This process
// never loads a plugin and never forks, so nothing a plugin does — crash,
// exit, hang, flood its output, start processes, leave threads or state
// behind — reaches it, on whatever thread of a threaded host it is asked. A plugin that cannot be
// used is rejected with its path and the reason, and the others load on.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "archfit/archfit_plugin.h"
#include "jit/kernel_module.hpp"
#include "manifest.hpp"

namespace archfit::plugin {

// How long a plugin's child may take to load, negotiate and probe before it
// is killed, unless ARCHFIT_PLUGIN_TIMEOUT (seconds) says otherwise.
inline constexpr std::chrono::milliseconds kDefaultPluginTimeLimit{20'000};
inline constexpr const char* kPluginTimeoutVariable = "ARCHFIT_PLUGIN_TIMEOUT";
inline constexpr const char* kPluginPathVariable = "ARCHFIT_PLUGIN_PATH";
// The most a plugin's child may send back (its modules' sources and images,
// its probe's answer); one that sends more is killed and rejected.
inline constexpr size_t kPluginAnswerLimit = size_t{64} << 20;

struct LoadedPlugin {
  Manifest manifest;
  uint32_t abi = 0;  // the version negotiated
  std::string name;
  std::string version;
  std::string description;
  std::vector<jit::KernelModuleSpec> modules;  // copies of what it offered
  std::string probe_json;                      // its probe's JSON object; "" without one
  double milliseconds = 0;  // the helper started, loading, negotiating, copying, sending; ended
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

// What the environment adds to every search: ARCHFIT_PLUGIN_PATH's folders
// and ARCHFIT_PLUGIN_TIMEOUT's limit, as the one reader of the environment
// (session/environment_settings.hpp) found them; this module reads no
// variable itself.
struct PluginEnvironment {
  std::vector<std::filesystem::path> paths;             // in the order given
  std::optional<std::chrono::milliseconds> time_limit;  // unset: kDefaultPluginTimeLimit
  // A malformed ARCHFIT_PLUGIN_TIMEOUT, in a sentence naming it: every
  // plugin is refused saying so, for loading them under a limit the user did
  // not choose would hide the mistake.
  std::string time_limit_problem;
};

// The environment's plugin settings from the two variables' values (nullptr
// or "": unset). ARCHFIT_PLUGIN_PATH is ':'-separated; ARCHFIT_PLUGIN_TIMEOUT
// is seconds above 0 and up to a day, such as 30 or 2.5.
PluginEnvironment plugin_environment(const char* plugin_path, const char* timeout);

struct PluginSearch {
  std::vector<std::filesystem::path> paths;   // the host's own, searched first
  bool environment = true;                    // then PluginEnvironment::paths
  bool install_dir = true;                    // then <prefix>/lib/archfit/plugins
  uint32_t abi_min = ARCHFIT_PLUGIN_ABI_MIN;  // the versions this host speaks
  uint32_t abi_max = ARCHFIT_PLUGIN_ABI_MAX;
  // Each plugin's time limit; unset: the environment's, else
  // kDefaultPluginTimeLimit.
  std::optional<std::chrono::milliseconds> time_limit;
};

// The directories `search` names that exist, each once: its own, then the
// environment's (when search.environment), then the install's.
std::vector<std::filesystem::path> plugin_directories(const PluginSearch& search,
                                                      const PluginEnvironment& environment = {});

// Manifests (*.archfit-plugin.yaml) in `dir` and its immediate subfolders,
// sorted by path.
std::vector<std::filesystem::path> find_manifests(const std::filesystem::path& dir);

// Loads one plugin from its manifest in archfit-plugin-probe, whose child
// gets `time_limit`; throws PluginError with the reason, which for a child
// that died names how ("it crashed loading (signal 11, SIGSEGV)").
LoadedPlugin load_plugin(const std::filesystem::path& manifest, uint32_t abi_min, uint32_t abi_max,
                         std::chrono::milliseconds time_limit = kDefaultPluginTimeLimit);

// Every plugin in the search path; a second plugin of a name already loaded
// is rejected. Never throws for a bad plugin.
PluginSet load_plugins(const PluginSearch& search, const PluginEnvironment& environment = {});

}  // namespace archfit::plugin
