#pragma once
// Paths as text: archfit's text is UTF-8 everywhere inside, and a path
// becomes the OS's own form (UTF-16 on Windows) only at the OS boundary.
// std::filesystem::path::string() converts through the C library's locale
// on Windows, which is no UTF-8 there; these convert as UTF-8 on every OS.
#include <filesystem>
#include <string>
#include <string_view>

namespace archfit::sys {

inline std::string utf8_of(const std::filesystem::path& path) {
  const std::u8string text = path.u8string();
  return std::string(text.begin(), text.end());
}

inline std::filesystem::path path_of_utf8(std::string_view text) {
  return std::filesystem::path(std::u8string(text.begin(), text.end()));
}

}  // namespace archfit::sys
