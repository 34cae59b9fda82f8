#include "plugin_load.hpp"

#include <boost/dll/shared_library.hpp>
#include <cstddef>
#include <exception>
#include <nlohmann/json.hpp>

#include "jit/module_desc.hpp"
#include "sys/library_loading.hpp"

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

}  // namespace

std::string abi_range_text(uint32_t low, uint32_t high) {
  return low == high ? std::to_string(low) : std::to_string(low) + "–" + std::to_string(high);
}

LoadedPlugin load_in_this_process(const Manifest& manifest, uint32_t abi_min, uint32_t abi_max) {
  boost::dll::shared_library library;
  boost::dll::fs::error_code load_error;
  library.load(manifest.library,
               boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, load_error);
  if (load_error || !library.is_loaded())
    throw PluginError("its library " + manifest.library.string() + " cannot be loaded: " +
                      sys::load_failure_message(manifest.library, load_error.message()));
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
                        abi_range_text(abi_min, abi_max) + ")");
    if (abi < abi_min || abi > abi_max)
      throw PluginError("it chose plugin ABI " + std::to_string(abi) + ", outside the " +
                        abi_range_text(abi_min, abi_max) + " this archfit offered");
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

}  // namespace archfit::plugin
