#include "plugin_wire.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace archfit::plugin {

using nlohmann::json;

namespace {

json module_json(const jit::KernelModuleSpec& spec) {
  const auto* image = reinterpret_cast<const uint8_t*>(spec.prebuilt.data());
  return {{"name", spec.name},
          {"source", spec.source},
          {"source_name", spec.source_name},
          {"headers", spec.headers},
          {"options", spec.options},
          {"entry_points", spec.entry_points},
          {"prebuilt", json::binary(std::vector<uint8_t>(image, image + spec.prebuilt.size()))}};
}

jit::KernelModuleSpec module_spec(const json& value) {
  jit::KernelModuleSpec spec;
  spec.name = value.at("name").get<std::string>();
  spec.source = value.at("source").get<std::string>();
  spec.source_name = value.at("source_name").get<std::string>();
  spec.headers = value.at("headers").get<std::map<std::string, std::string>>();
  spec.options = value.at("options").get<std::vector<std::string>>();
  spec.entry_points = value.at("entry_points").get<std::vector<std::string>>();
  const auto& image = value.at("prebuilt").get_binary();
  spec.prebuilt.resize(image.size());
  std::transform(image.begin(), image.end(), spec.prebuilt.begin(),
                 [](uint8_t byte) { return std::byte{byte}; });
  return spec;
}

}  // namespace

std::vector<uint8_t> encode_loaded(const LoadedPlugin& plugin) {
  json modules = json::array();
  for (const auto& spec : plugin.modules) modules.push_back(module_json(spec));
  return json::to_cbor(json{{"loaded",
                             {{"abi", plugin.abi},
                              {"name", plugin.name},
                              {"version", plugin.version},
                              {"description", plugin.description},
                              {"modules", modules},
                              {"probe_json", plugin.probe_json}}}});
}

std::vector<uint8_t> encode_refusal(const std::string& reason) {
  return json::to_cbor(json{{"refused", reason}});
}

LoadedPlugin decode_answer(const std::vector<uint8_t>& bytes, const Manifest& manifest) {
  // A child that exited 0 without an answer: the plugin ended its process
  // itself (exit(0) in a constructor), before it was negotiated.
  if (bytes.empty()) throw PluginError("it ended its process while loading, sending nothing back");
  const json answer = json::from_cbor(bytes, true, false);
  if (answer.is_discarded())
    throw PluginError("its loading process sent back " + std::to_string(bytes.size()) +
                      " bytes that are not archfit's answer (not CBOR)");
  try {
    if (answer.contains("refused")) throw PluginError(answer.at("refused").get<std::string>());
    const json& loaded = answer.at("loaded");
    LoadedPlugin plugin;
    plugin.manifest = manifest;
    plugin.abi = loaded.at("abi").get<uint32_t>();
    plugin.name = loaded.at("name").get<std::string>();
    plugin.version = loaded.at("version").get<std::string>();
    plugin.description = loaded.at("description").get<std::string>();
    for (const auto& module : loaded.at("modules")) plugin.modules.push_back(module_spec(module));
    plugin.probe_json = loaded.at("probe_json").get<std::string>();
    return plugin;
  } catch (const json::exception& error) {
    throw PluginError(std::string("its loading process sent back an answer archfit cannot read: ") +
                      error.what());
  }
}

}  // namespace archfit::plugin
