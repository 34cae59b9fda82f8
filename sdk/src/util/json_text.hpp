#pragma once
// JSON as archfit prints it: what nlohmann::json writes, with bytes that are
// not UTF-8 replaced (U+FFFD), and DEL and the C1 controls (U+0080–U+009F)
// escaped as \u00XX too. JSON lets them stand raw, but a terminal acts on
// them and strict readers refuse them; names read from an environment may
// hold any of them (issue 34).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

namespace archfit::util {

inline std::string json_text(const nlohmann::json& document, int indent = -1) {
  const std::string raw =
      document.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(raw.size());
  // Outside strings JSON is printable ASCII, so these bytes are inside one.
  for (size_t i = 0; i < raw.size(); ++i) {
    const auto byte = static_cast<unsigned char>(raw[i]);
    unsigned code = 0x100;  // none
    if (byte == 0x7f) {
      code = byte;
    } else if (byte == 0xc2 && i + 1 < raw.size()) {
      const auto next = static_cast<unsigned char>(raw[i + 1]);
      if (next >= 0x80 && next <= 0x9f) {
        code = next;
        ++i;
      }
    }
    if (code == 0x100) {
      out += raw[i];
      continue;
    }
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\u%04x", code);
    out += escaped;
  }
  return out;
}

}  // namespace archfit::util
