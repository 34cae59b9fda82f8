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
  // While the walk lists directories, before any file is read: how many it
  // has listed, and files_total counts the files found so far. A walk of a
  // big tree can take seconds before it finds anything worth reading.
  bool walking = false;
  size_t directories = 0;
  size_t files_done = 0;
  size_t files_total = 0;
  uint64_t bytes_done = 0;
  uint64_t bytes_total = 0;
  std::string_view last;  // the file just finished (walking: the directory just listed)
};

using ProgressCallback = std::function<void(const ScanProgress&)>;

}  // namespace archfit::binary
