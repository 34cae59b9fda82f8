#pragma once
// What the child that loads a plugin (plugin_host.cpp) sends back to the
// host: everything the plugin offered, or the reason it was refused, as
// CBOR (nlohmann-json; a prebuilt image travels as a CBOR byte string).
// The manifest is not sent: the host read it before forking.
#include <cstdint>
#include <string>
#include <vector>

#include "plugin_host.hpp"

namespace archfit::plugin {

std::vector<uint8_t> encode_loaded(const LoadedPlugin& plugin);
std::vector<uint8_t> encode_refusal(const std::string& reason);

// The plugin the child sent, its manifest set to `manifest`; throws
// PluginError with the refusal the child sent, or saying that the bytes
// are not an answer (none at all, not CBOR, a field missing or mistyped).
LoadedPlugin decode_answer(const std::vector<uint8_t>& bytes, const Manifest& manifest);

}  // namespace archfit::plugin
