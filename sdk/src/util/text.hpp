#pragma once
// Small text helpers every module needs, written once.
#include <cctype>
#include <string>
#include <string_view>

namespace archfit::util {

// `text` without the white space at either end.
inline std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

// "NVIDIA GeForce RTX 5090" → "RTX 5090": a GPU by the name people say, for
// a title. Only the brand prefixes go; "B200" and "Jetson Orin" stay whole.
inline std::string short_gpu_name(std::string_view name) {
  for (std::string_view prefix : {"NVIDIA ", "GeForce "})
    if (name.starts_with(prefix)) name.remove_prefix(prefix.size());
  return std::string(name);
}

}  // namespace archfit::util
