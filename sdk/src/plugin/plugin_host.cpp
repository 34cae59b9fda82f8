#include "plugin_host.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <boost/dll/shared_library.hpp>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "jit/module_desc.hpp"
#include "plugin_wire.hpp"
#include "sys/child_process.hpp"
#include "sys/module_location.hpp"
#include "sys/trust.hpp"

#ifndef ARCHFIT_PLUGIN_INSTALL_SUBDIR
#define ARCHFIT_PLUGIN_INSTALL_SUBDIR "lib/archfit/plugins"
#endif

namespace archfit::plugin {

namespace fs = std::filesystem;

namespace {

// Why `text`, a probe's answer, is not a JSON object; "" when it is one.
std::string not_a_json_object(const std::string& text) {
  constexpr size_t kShown = 40;
  const std::string shown = text.size() > kShown ? text.substr(0, kShown) + "…" : text;
  try {
    if (nlohmann::json::parse(text).is_object()) return "";
    return "its probe returned \"" + shown + "\", which is JSON but not an object";
  } catch (const nlohmann::json::parse_error& error) {
    return "its probe returned \"" + shown + "\", which is not JSON (byte " +
           std::to_string(error.byte) + ")";
  }
}

std::string range(uint32_t low, uint32_t high) {
  return low == high ? std::to_string(low) : std::to_string(low) + "–" + std::to_string(high);
}

// The plugin's info, copied: strings, modules, the probe's answer.
LoadedPlugin copy_info(const Manifest& manifest, uint32_t abi, const archfit_plugin_info& info) {
  // Fields up to `probe` exist since ABI 1; a smaller struct is not an info.
  if (info.struct_size < offsetof(archfit_plugin_info, probe) + sizeof(info.probe))
    throw PluginError("its archfit_plugin_info has struct_size " +
                      std::to_string(info.struct_size) + ", smaller than ABI 1's");
  if (info.name == nullptr || manifest.name != info.name)
    throw PluginError("it reports the name \"" + std::string(info.name ? info.name : "(NULL)") +
                      "\", its manifest says \"" + manifest.name + "\"");
  LoadedPlugin plugin;
  plugin.manifest = manifest;
  plugin.abi = abi;
  plugin.name = info.name;
  plugin.version = info.version ? info.version : "";
  plugin.description = info.description ? info.description : "";
  if (info.module_count != 0 && info.modules == nullptr)
    throw PluginError("its modules are NULL but module_count is " +
                      std::to_string(info.module_count));
  for (size_t i = 0; i < info.module_count; ++i) {
    const archfit_module_desc& desc = info.modules[i];
    const std::string which = "module " + std::to_string(i) +
                              (desc.name ? std::string(" (") + desc.name + ")" : std::string());
    if (desc.struct_size < sizeof(archfit_module_desc))
      throw PluginError(which + " has struct_size " + std::to_string(desc.struct_size) +
                        ", not sizeof(archfit_module_desc)");
    try {
      plugin.modules.push_back(jit::spec_from_desc(desc));
    } catch (const jit::ModuleDescError& error) {
      throw PluginError(which + ": " + error.what());
    }
    if (plugin.modules.back().entry_points.empty())
      throw PluginError(which + " names no entry points");
    if (plugin.modules.back().source.empty() && plugin.modules.back().prebuilt.empty())
      throw PluginError(which + " has neither source nor prebuilt images");
  }
  if (info.probe != nullptr) {
    if (const char* text = info.probe(); text != nullptr) {
      plugin.probe_json = text;
      // archfit_plugin.h promises an object; a report printing it must stay JSON.
      if (const std::string problem = not_a_json_object(plugin.probe_json); !problem.empty())
        throw PluginError(problem);
    }
  }
  return plugin;
}

// Why the dynamic loader refuses `library`: Boost.DLL keeps only an errno
// ("Bad file descriptor"), so the loader is asked once more for its own
// words ("invalid ELF header", "libfoo.so: cannot open shared object file").
std::string loader_message(const fs::path& library, const std::string& fallback) {
  ::dlerror();
  if (void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(handle);
    return fallback;
  }
  const char* message = ::dlerror();
  return message ? message : fallback;
}

// Loads the library, negotiates, copies everything out and unloads it: the
// work of the child process load_plugin forks. Throws PluginError.
LoadedPlugin load_in_this_process(const Manifest& manifest, uint32_t abi_min, uint32_t abi_max) {
  boost::dll::shared_library library;
  boost::dll::fs::error_code load_error;
  library.load(manifest.library,
               boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, load_error);
  if (load_error || !library.is_loaded())
    throw PluginError("its library " + manifest.library.string() + " cannot be loaded: " +
                      loader_message(manifest.library, load_error.message()));
  if (!library.has(ARCHFIT_PLUGIN_NEGOTIATE))
    throw PluginError("its library " + manifest.library.string() + " exports no " +
                      ARCHFIT_PLUGIN_NEGOTIATE);
  const auto negotiate = library.get<int(uint32_t, uint32_t, uint32_t*, archfit_plugin_info*)>(
      ARCHFIT_PLUGIN_NEGOTIATE);

  uint32_t abi = 0;
  archfit_plugin_info info{};
  LoadedPlugin plugin;
  try {
    if (!negotiate(abi_min, abi_max, &abi, &info))
      throw PluginError("it declined every plugin ABI this archfit speaks (" +
                        range(abi_min, abi_max) + ")");
    if (abi < abi_min || abi > abi_max)
      throw PluginError("it chose plugin ABI " + std::to_string(abi) + ", outside the " +
                        range(abi_min, abi_max) + " this archfit offered");
    plugin = copy_info(manifest, abi, info);
  } catch (const PluginError&) {
    throw;
  } catch (const std::exception& thrown) {
    // A C++ plugin that let an exception out of its C entry point (or its probe).
    throw PluginError(std::string("it threw from its entry point: ") + thrown.what());
  } catch (...) {
    throw PluginError("it threw from its entry point (not a std::exception)");
  }
  library.unload();  // everything it offered has been copied
  return plugin;
}

}  // namespace

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

LoadedPlugin load_plugin(const fs::path& manifest_path, uint32_t abi_min, uint32_t abi_max,
                         std::chrono::milliseconds time_limit) {
  const auto started = std::chrono::steady_clock::now();
  const Manifest manifest = read_manifest(manifest_path);
  // Before anything is loaded: the manifest already says which ABI it speaks.
  if (manifest.abi_max < abi_min || manifest.abi_min > abi_max)
    throw PluginError("its manifest says plugin ABI " + range(manifest.abi_min, manifest.abi_max) +
                      ", this archfit speaks " + range(abi_min, abi_max));
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

  // The library is loaded only in a child process (sys/child_process.hpp):
  // whatever its constructors, negotiation or probe do — crash, exit, hang —
  // ends that child, never this process, which never maps the library.
  sys::ChildLimits limits;
  limits.time_limit = time_limit;
  limits.max_bytes = kPluginAnswerLimit;
  const sys::ChildOutcome outcome = sys::run_in_child(
      [&] {
        try {
          return encode_loaded(load_in_this_process(manifest, abi_min, abi_max));
        } catch (const PluginError& refused) {
          return encode_refusal(refused.what());
        } catch (const std::exception& error) {  // an allocation, the file system
          return encode_refusal(std::string("it could not be loaded: ") + error.what());
        }
      },
      limits);
  if (const std::string failure = sys::describe_failure(outcome, limits, "loading");
      !failure.empty()) {
    // A host that ignores SIGCHLD hides how the child ended; its answer, if
    // whole, still says what happened.
    if (outcome.ending != sys::ChildOutcome::Ending::vanished || outcome.output.empty())
      throw PluginError(failure);
  }
  LoadedPlugin plugin = decode_answer(outcome.output, manifest);
  plugin.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return plugin;
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
    for (std::string item; std::getline(list, item, ':');)
      if (!item.empty()) environment.paths.emplace_back(item);
  }
  try {
    environment.time_limit = parse_time_limit(timeout);
  } catch (const PluginError& error) {
    environment.time_limit_problem = error.what();
  }
  return environment;
}

PluginSet load_plugins(const PluginSearch& search, const PluginEnvironment& environment) {
  PluginSet set;
  // The host's limit, else the environment's (a malformed one refuses
  // every plugin, saying why), else the default.
  const std::chrono::milliseconds time_limit = search.time_limit        ? *search.time_limit
                                               : environment.time_limit ? *environment.time_limit
                                                                        : kDefaultPluginTimeLimit;
  const std::string bad_time_limit =
      search.time_limit ? std::string() : environment.time_limit_problem;
  std::map<std::string, fs::path> names;  // name → where the loaded one came from
  for (const auto& dir : plugin_directories(search, environment)) {
    // A folder someone else can write to could hold anything: not searched.
    if (auto untrusted = sys::untrusted_because(dir, "plugins", sys::OtherWriters::group);
        !untrusted.empty()) {
      set.rejected.push_back({dir, "refusing the folder: " + untrusted});
      continue;
    }
    set.searched.push_back(dir);
    for (const auto& manifest : find_manifests(dir)) {
      if (!bad_time_limit.empty()) {
        set.rejected.push_back({manifest, "not loaded: " + bad_time_limit});
        continue;
      }
      try {
        LoadedPlugin plugin = load_plugin(manifest, search.abi_min, search.abi_max, time_limit);
        if (const auto seen = names.find(plugin.name); seen != names.end()) {
          set.rejected.push_back({manifest, "a plugin named \"" + plugin.name +
                                                "\" is already loaded from " +
                                                seen->second.string()});
          continue;
        }
        names.emplace(plugin.name, manifest);
        set.loaded.push_back(std::move(plugin));
      } catch (const PluginError& error) {
        set.rejected.push_back({manifest, error.what()});
      } catch (const std::exception& error) {  // an allocation, the file system
        set.rejected.push_back({manifest, std::string("it could not be loaded: ") + error.what()});
      }
    }
  }
  return set;
}

}  // namespace archfit::plugin
