#pragma once
// A path in JSON. JSON strings are Unicode, Linux file names are bytes: a name
// that is not UTF-8 reaches JSON with its bad bytes replaced (U+FFFD), and
// can no longer be opened. Such a path also travels as `path_bytes`, the
// exact bytes in base64 (RFC 4648), so a reader can reopen it
// (docs/scan-json.md).
#include <nlohmann/json.hpp>
#include <string_view>

namespace archfit::binary {

// Adds "path" to `object`, and "path_bytes" when `path` is not UTF-8.
void put_path(nlohmann::json& object, std::string_view path);

}  // namespace archfit::binary
