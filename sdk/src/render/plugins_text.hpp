#pragma once
// What `archfit plugins list` tells people: the folders searched, each
// plugin loaded (its ABI, kernel modules, probe, time, library) and each one
// rejected with the reason.
#include <string>

#include "plugin/plugin_host.hpp"

namespace archfit::render {

std::string plugins_text(const plugin::PluginSet& set);

}  // namespace archfit::render
