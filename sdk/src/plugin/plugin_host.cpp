#include "plugin_host.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <sstream>
#include <system_error>

#include "plugin_load.hpp"
#include "plugin_wire.hpp"
#include "probe_helper.hpp"
#include "sys/child_process.hpp"
#include "sys/module_location.hpp"
#include "sys/trust.hpp"
#include "sys/user_folders.hpp"
#include "sys/utf8_path.hpp"

#ifndef ARCHFIT_PLUGIN_INSTALL_SUBDIR
#define ARCHFIT_PLUGIN_INSTALL_SUBDIR "lib/archfit/plugins"
#endif

namespace archfit::plugin {

namespace fs = std::filesystem;

std::vector<fs::path> plugin_directories(const PluginSearch& search,
                                         const PluginEnvironment& environment) {
  std::vector<fs::path> candidates = search.paths;
  if (search.environment)
    candidates.insert(candidates.end(), environment.paths.begin(), environment.paths.end());
  if (search.install_dir) {
    if (const fs::path module = sys::running_module_dir(); !module.empty())
      candidates.push_back(module.parent_path() / ARCHFIT_PLUGIN_INSTALL_SUBDIR);
  }
  std::vector<fs::path> directories;
  for (const auto& candidate : candidates) {
    std::error_code error;
    if (!fs::is_directory(candidate, error)) continue;
    const fs::path canonical = fs::weakly_canonical(candidate, error);
    if (std::find(directories.begin(), directories.end(), canonical) == directories.end())
      directories.push_back(canonical);
  }
  return directories;
}

std::vector<fs::path> find_manifests(const fs::path& dir) {
  std::vector<fs::path> manifests;
  const auto is_manifest = [](const fs::directory_entry& entry) {
    std::error_code error;
    return entry.is_regular_file(error) &&
           entry.path().filename().string().ends_with(kManifestSuffix);
  };
  std::error_code error;
  for (fs::directory_iterator entry(dir, error), end; !error && entry != end;
       entry.increment(error)) {
    if (is_manifest(*entry)) {
      manifests.push_back(entry->path());
    } else if (std::error_code is_dir; entry->is_directory(is_dir)) {
      std::error_code inner;
      for (fs::directory_iterator sub(entry->path(), inner), sub_end; !inner && sub != sub_end;
           sub.increment(inner))
        if (is_manifest(*sub)) manifests.push_back(sub->path());
    }
  }
  std::sort(manifests.begin(), manifests.end());
  return manifests;
}

namespace {

// The manifest, read and judged before anything is loaded; throws
// PluginError.
Manifest checked_manifest(const fs::path& manifest_path, uint32_t abi_min, uint32_t abi_max) {
  Manifest manifest = read_manifest(manifest_path);
  // The manifest already says which ABI it speaks.
  if (manifest.abi_max < abi_min || manifest.abi_min > abi_max)
    throw PluginError("its manifest says plugin ABI " +
                      abi_range_text(manifest.abi_min, manifest.abi_max) +
                      ", this archfit speaks " + abi_range_text(abi_min, abi_max));
  std::error_code error;
  if (!fs::is_regular_file(manifest.library, error))
    throw PluginError("its library " + manifest.library.string() + " does not exist");
  // Code another user could have replaced is never loaded (sys/trust.hpp):
  // judged along the whole path, so a plugin's own subfolder, and the folder
  // `library: ../../x.so` leads to, count as much as the file (issue 24).
  for (const fs::path& file : {manifest_path, manifest.library}) {
    if (auto untrusted = sys::untrusted_path_chain(file, "plugins", sys::OtherWriters::group);
        !untrusted.empty())
      throw PluginError("refusing " + file.string() + ": " + untrusted);
  }
  return manifest;
}

// The plugin the helper's child sent back, or PluginError saying why it
// cannot be used.
LoadedPlugin judged(const ProbeAnswer& answer, const Manifest& manifest,
                    std::chrono::milliseconds time_limit) {
  const sys::ChildOutcome& outcome = answer.outcome;
  if (const std::string failure =
          sys::describe_failure(outcome, plugin_child_limits(time_limit), "loading");
      !failure.empty()) {
    // A host that ignores SIGCHLD hides how the child ended; its answer, if
    // whole, still says what happened.
    if (outcome.ending != sys::ChildOutcome::Ending::vanished || outcome.output.empty())
      throw PluginError(failure);
  }
  if (outcome.left_running > 0)
    throw PluginError("it left " + std::to_string(outcome.left_running) +
                      (outcome.left_running == 1 ? " process" : " processes") +
                      " running after loading, killed: a plugin may not start processes that "
                      "outlive its loading");
  LoadedPlugin plugin = decode_answer(outcome.output, manifest);
  plugin.milliseconds = answer.milliseconds;
  return plugin;
}

// The library is loaded only in archfit-plugin-probe (probe_helper.hpp),
// started without forking this process: whatever a plugin's constructors,
// negotiation or probe do — crash, exit, hang, print without end, start
// processes — ends there, never here; this process never maps it.
std::vector<ProbeAnswer> probe(const std::vector<fs::path>& manifests, uint32_t abi_min,
                               uint32_t abi_max, std::chrono::milliseconds time_limit) {
  return probe_in_helper(find_probe_helper(), manifests, abi_min, abi_max, time_limit);
}

}  // namespace

LoadedPlugin load_plugin(const fs::path& manifest_path, uint32_t abi_min, uint32_t abi_max,
                         std::chrono::milliseconds time_limit) {
  const Manifest manifest = checked_manifest(manifest_path, abi_min, abi_max);
  return judged(probe({manifest_path}, abi_min, abi_max, time_limit).at(0), manifest, time_limit);
}

namespace {

// Seconds as ARCHFIT_PLUGIN_TIMEOUT gives them; nullopt for unset or empty.
std::optional<std::chrono::milliseconds> parse_time_limit(const char* value) {
  if (value == nullptr || *value == '\0') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(value, &end);
  // Up to a day: a longer limit is no limit, and would overflow the clock.
  if (errno != 0 || end == value || *end != '\0' || !(seconds > 0) || seconds > 86'400)
    throw PluginError(std::string(kPluginTimeoutVariable) + " is \"" + value +
                      "\", not a number of seconds above 0 and up to 86400 (such as 30 or 2.5)");
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(seconds * 1000)));
}

}  // namespace

PluginEnvironment plugin_environment(const char* plugin_path, const char* timeout) {
  PluginEnvironment environment;
  if (plugin_path != nullptr) {
    std::stringstream list(plugin_path);
    for (std::string item; std::getline(list, item, sys::kPathListSeparator);)
      if (!item.empty()) environment.paths.push_back(sys::path_of_utf8(item));
  }
  try {
    environment.time_limit = parse_time_limit(timeout);
  } catch (const PluginError& error) {
    environment.time_limit_problem = error.what();
  }
  return environment;
}

PluginSet load_plugins(const PluginSearch& search, const PluginEnvironment& environment) {
  // The host's limit, else the environment's (a malformed one refuses
  // every plugin, saying why), else the default.
  const std::chrono::milliseconds time_limit = search.time_limit        ? *search.time_limit
                                               : environment.time_limit ? *environment.time_limit
                                                                        : kDefaultPluginTimeLimit;
  const std::string bad_time_limit =
      search.time_limit ? std::string() : environment.time_limit_problem;
  // What was found, in order: a folder or manifest refused, or a manifest
  // to load, all loaded by one helper below.
  struct Found {
    fs::path path;
    std::string refused;
    std::optional<Manifest> manifest;
  };
  std::vector<Found> found;
  std::vector<fs::path> to_load;
  PluginSet set;
  for (const auto& dir : plugin_directories(search, environment)) {
    // A folder someone else can write to could hold anything: not searched.
    if (auto untrusted = sys::untrusted_because(dir, "plugins", sys::OtherWriters::group);
        !untrusted.empty()) {
      found.push_back({dir, "refusing the folder: " + untrusted, std::nullopt});
      continue;
    }
    set.searched.push_back(dir);
    for (const auto& manifest : find_manifests(dir)) {
      if (!bad_time_limit.empty()) {
        found.push_back({manifest, "not loaded: " + bad_time_limit, std::nullopt});
        continue;
      }
      try {
        found.push_back({manifest, "", checked_manifest(manifest, search.abi_min, search.abi_max)});
        to_load.push_back(manifest);
      } catch (const PluginError& error) {
        found.push_back({manifest, error.what(), std::nullopt});
      } catch (const std::exception& error) {  // an allocation, the file system
        found.push_back(
            {manifest, std::string("it could not be loaded: ") + error.what(), std::nullopt});
      }
    }
  }
  std::vector<ProbeAnswer> answers;
  std::string not_probed;  // why none could be loaded: the helper failed
  if (!to_load.empty()) {
    try {
      answers = probe(to_load, search.abi_min, search.abi_max, time_limit);
    } catch (const PluginError& error) {
      not_probed = error.what();
    }
  }
  std::map<std::string, fs::path> names;  // name → where the loaded one came from
  size_t next_answer = 0;
  for (Found& entry : found) {
    if (!entry.manifest) {
      set.rejected.push_back({entry.path, entry.refused});
      continue;
    }
    if (!not_probed.empty()) {
      set.rejected.push_back({entry.path, not_probed});
      continue;
    }
    try {
      LoadedPlugin plugin = judged(answers.at(next_answer++), *entry.manifest, time_limit);
      if (const auto seen = names.find(plugin.name); seen != names.end()) {
        set.rejected.push_back({entry.path, "a plugin named \"" + plugin.name +
                                                "\" is already loaded from " +
                                                seen->second.string()});
        continue;
      }
      names.emplace(plugin.name, entry.path);
      set.loaded.push_back(std::move(plugin));
    } catch (const PluginError& error) {
      set.rejected.push_back({entry.path, error.what()});
    } catch (const std::exception& error) {  // an allocation
      set.rejected.push_back({entry.path, std::string("it could not be loaded: ") + error.what()});
    }
  }
  return set;
}

}  // namespace archfit::plugin
