#pragma once
// Loading one plugin in the calling process: its library loaded with
// Boost.DLL (rtld_now | rtld_local), the ABI negotiated, everything it
// offers (and its probe's answer) copied out, and the library unloaded.
// Only archfit-plugin-probe's child calls it (probe_helper.hpp): a plugin's
// code never runs in a host's process.
#include <cstdint>
#include <string>

#include "plugin_host.hpp"

namespace archfit::plugin {

// "1", or "1–3": a range of plugin ABI versions, for messages.
std::string abi_range_text(uint32_t low, uint32_t high);

// Throws PluginError saying why the plugin cannot be used.
LoadedPlugin load_in_this_process(const Manifest& manifest, uint32_t abi_min, uint32_t abi_max);

}  // namespace archfit::plugin
