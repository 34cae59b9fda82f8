#pragma once
// Page-cache control for the benchmarks: warm figures are taken from a
// defined state (evicted, then read once in order, as a first `cat` leaves
// it), cold figures after eviction. See docs/scanning.md, "Speed".
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <vector>

namespace archfit::bench {

// `cat FILES > /dev/null`: read() every byte through a 128 KiB buffer.
inline uint64_t read_every_byte(const std::vector<std::filesystem::path>& files) {
  std::vector<char> buffer(128 * 1024);
  uint64_t total = 0;
  for (const auto& file : files) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    for (ssize_t n; (n = ::read(fd, buffer.data(), buffer.size())) > 0;)
      total += static_cast<uint64_t>(n);
    ::close(fd);
  }
  return total;
}

inline void evict_from_page_cache(const std::vector<std::filesystem::path>& files) {
  for (const auto& file : files) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

// The warm state both benchmarks measure from.
inline void warm_from_a_known_state(const std::vector<std::filesystem::path>& files) {
  evict_from_page_cache(files);
  read_every_byte(files);
}

}  // namespace archfit::bench
