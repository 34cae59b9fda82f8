#pragma once
// A PluginSet as JSON ({searched, loaded, rejected}): what
// `archfit plugins list --json` prints and archfit_plugin_set_json returns
// (docs/plugins.md).
#include <nlohmann/json.hpp>

#include "plugin_host.hpp"

namespace archfit::plugin {

nlohmann::json plugin_set_json(const PluginSet& set);

}  // namespace archfit::plugin
