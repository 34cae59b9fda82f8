#pragma once
// A path written with '/' as this OS prints it: unchanged on Linux, with '\'
// on Windows, where the tests also run (cross-built, under Wine) and archfit
// names files the way Explorer and cmd.exe show them.
#include <filesystem>
#include <string>

namespace archfit::testing {

inline std::string native_path(const std::string& generic) {
  return std::filesystem::path(generic).make_preferred().string();
}

}  // namespace archfit::testing
