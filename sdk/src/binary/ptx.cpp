#include "ptx.hpp"

#include <charconv>

namespace archfit::binary {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

// Skips whitespace and // and /* */ comments.
size_t skip_trivia(std::string_view text, size_t at) {
  while (at < text.size()) {
    if (is_space(text[at])) {
      ++at;
    } else if (text.substr(at, 2) == "//") {
      const auto end = text.find('\n', at);
      at = end == std::string_view::npos ? text.size() : end + 1;
    } else if (text.substr(at, 2) == "/*") {
      const auto end = text.find("*/", at + 2);
      at = end == std::string_view::npos ? text.size() : end + 2;
    } else {
      break;
    }
  }
  return at;
}

std::string_view next_word(std::string_view text, size_t& at) {
  at = skip_trivia(text, at);
  const size_t begin = at;
  while (at < text.size() && !is_space(text[at]) && text[at] != ',') ++at;
  return text.substr(begin, at - begin);
}

bool parse_number(std::string_view digits, uint32_t& out) {
  if (digits.empty()) return false;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  return error == std::errc{} && end == digits.data() + digits.size();
}

}  // namespace

std::optional<PtxHeader> read_ptx_header(std::string_view text) {
  PtxHeader header;
  bool have_version = false, have_target = false;
  size_t at = 0;
  // .version comes first in every PTX module; .target and .address_size follow.
  for (int directives = 0; directives < 8 && !(have_version && have_target); ++directives) {
    const std::string_view word = next_word(text, at);
    if (word == ".version") {
      const std::string_view value = next_word(text, at);
      const auto dot = value.find('.');
      uint32_t major = 0, minor = 0;
      if (dot == std::string_view::npos || !parse_number(value.substr(0, dot), major) ||
          !parse_number(value.substr(dot + 1), minor) || major > 0xffff || minor > 0xffff) {
        return std::nullopt;
      }
      header.version = {static_cast<uint16_t>(major), static_cast<uint16_t>(minor)};
      have_version = true;
    } else if (word == ".target") {
      // ".target sm_90a" or ".target sm_80, debug": the arch is the first word.
      std::string_view target = next_word(text, at);
      if (!target.starts_with("sm_")) return std::nullopt;
      header.target = std::string(target);
      std::string_view digits = target.substr(3);
      if (digits.ends_with('a')) header.variant = Variant::arch_specific;
      if (digits.ends_with('f')) header.variant = Variant::family_specific;
      if (header.variant != Variant::plain) digits.remove_suffix(1);
      if (!parse_number(digits, header.sm)) return std::nullopt;
      have_target = true;
    } else if (word == ".address_size") {
      next_word(text, at);
    } else {
      return std::nullopt;
    }
  }
  if (!have_version || !have_target) return std::nullopt;
  return header;
}

}  // namespace archfit::binary
