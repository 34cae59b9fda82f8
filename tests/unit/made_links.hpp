#pragma once
// Symbolic links in tests: Windows makes them only with a privilege (or
// Developer Mode), and Wine not at all ("Function not implemented"), so a
// test that needs one skips there, saying why; on POSIX a failure is a
// failure.
#include <filesystem>

namespace archfit::testing {

inline constexpr const char* kNoLinks = "this system makes no symbolic links here";

// Runs `make`, which makes links; false when this system refused them.
template <typename Make>
bool made_links(Make make) {
  try {
    make();
    return true;
  } catch (const std::filesystem::filesystem_error&) {
#ifdef _WIN32
    return false;
#else
    throw;
#endif
  }
}

}  // namespace archfit::testing
