#pragma once
// Well-formed UTF-8 (RFC 3629, table 3-7 of the Unicode standard): what a
// terminal or a JSON string can carry as it is. File names on Linux are bytes
// and need not be UTF-8; these say where they stop being it.
#include <cstddef>
#include <string_view>

namespace archfit::util {

// The length (1-4) of the well-formed UTF-8 sequence that starts `text`; 0
// when the bytes there are not one (a stray continuation byte, an overlong
// form, a surrogate, past U+10FFFF, or cut off by the end of `text`).
inline size_t utf8_sequence_length(std::string_view text) {
  if (text.empty()) return 0;
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char second_low = 0x80, second_high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_low = 0xA0;   // no overlong forms
    if (lead == 0xED) second_high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_low = 0x90;   // no overlong forms
    if (lead == 0xF4) second_high = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  if (byte(1) < second_low || byte(1) > second_high) return 0;
  for (size_t i = 2; i < length; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  return length;
}

inline bool is_valid_utf8(std::string_view text) {
  while (!text.empty()) {
    const size_t length = utf8_sequence_length(text);
    if (length == 0) return false;
    text.remove_prefix(length);
  }
  return true;
}

}  // namespace archfit::util
