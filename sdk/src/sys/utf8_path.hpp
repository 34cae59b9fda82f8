#pragma once
// Paths as text: archfit's text is UTF-8 everywhere inside, and a path
// becomes the OS's own form (UTF-16 on Windows) only at the OS boundary.
// On Windows, std::filesystem::path(std::string) reads the bytes in the C
// library's locale (libstdc++: one byte, one UTF-16 unit, so "Modèles"
// becomes "ModÃ¨les"; measured under Wine), and MSVC's path::string()
// converts back through the ANSI code page; these two convert as UTF-8 on
// every OS and with every C++ library.
#include <filesystem>
#include <string>
#include <string_view>

#include "util/utf8.hpp"

namespace archfit::sys {

inline std::string utf8_of(const std::filesystem::path& path) {
  const std::u8string text = path.u8string();
  return std::string(text.begin(), text.end());
}

inline std::filesystem::path path_of_utf8(std::string_view text) {
#ifdef _WIN32
  // Bytes that are not UTF-8 (a DT_NEEDED entry, a zip member's name) name
  // no file Windows can hold: kept as they are, they find nothing, where
  // the UTF-8 conversion would throw.
  if (!util::is_valid_utf8(text)) return std::filesystem::path(std::string(text));
#endif
  return std::filesystem::path(std::u8string(text.begin(), text.end()));
}

}  // namespace archfit::sys
