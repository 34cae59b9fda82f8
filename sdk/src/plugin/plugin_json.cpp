#include "plugin_json.hpp"

namespace archfit::plugin {

using nlohmann::json;

namespace {

// The probe's object; null without one. The host rejects a plugin whose
// probe is not an object (plugin_host.cpp), so null here is only a guard:
// a value that failed to parse would print as text that is not JSON.
json probe_object(const std::string& text) {
  json value = json::parse(text, nullptr, false);
  return value.is_object() ? value : json(nullptr);
}

}  // namespace

nlohmann::json plugin_set_json(const PluginSet& set) {
  json loaded = json::array();
  for (const auto& plugin : set.loaded) {
    json modules = json::array();
    for (const auto& module : plugin.modules)
      modules.push_back({{"name", module.name},
                         {"entry_points", module.entry_points},
                         {"source", !module.source.empty()},
                         {"prebuilt_bytes", module.prebuilt.size()}});
    loaded.push_back({{"name", plugin.name},
                      {"version", plugin.version},
                      {"description", plugin.description},
                      {"abi", plugin.abi},
                      {"manifest", plugin.manifest.path.string()},
                      {"library", plugin.manifest.library.string()},
                      {"modules", modules},
                      {"probe", probe_object(plugin.probe_json)},
                      {"milliseconds", plugin.milliseconds}});
  }
  json rejected = json::array();
  for (const auto& plugin : set.rejected)
    rejected.push_back({{"path", plugin.path.string()}, {"reason", plugin.reason}});
  json searched = json::array();
  for (const auto& dir : set.searched) searched.push_back(dir.string());
  return {{"searched", searched}, {"loaded", loaded}, {"rejected", rejected}};
}

}  // namespace archfit::plugin
