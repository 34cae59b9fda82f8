#pragma once
// How far a scan of many files has got, for a progress line. The scan calls
// the callback after each file, one call at a time (never concurrently), from
// whichever worker finished it.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

namespace archfit::binary {

struct ScanProgress {
  size_t files_done = 0;
  size_t files_total = 0;
  uint64_t bytes_done = 0;
  uint64_t bytes_total = 0;
  std::string_view last;  // the file just finished
};

using ProgressCallback = std::function<void(const ScanProgress&)>;

}  // namespace archfit::binary
