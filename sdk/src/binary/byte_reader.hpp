#pragma once
// Bounds-checked little-endian reads over a byte span. Every size and offset
// that comes from a file goes through here, so a hostile file can make the
// scanner report an error but never read outside its buffer.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "scan_error.hpp"

namespace archfit::binary {

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> bytes) : bytes_(bytes) {}

  uint64_t size() const { return bytes_.size(); }
  const std::byte* data() const { return bytes_.data(); }

  // True when [offset, offset + length) lies inside the buffer (overflow-safe).
  bool contains(uint64_t offset, uint64_t length) const {
    return offset <= bytes_.size() && length <= bytes_.size() - offset;
  }

  void require(uint64_t offset, uint64_t length, std::string_view what) const {
    if (!contains(offset, length)) {
      throw ScanError(offset, std::string(what) + " needs " + std::to_string(length) +
                                  " bytes but only " +
                                  std::to_string(offset < size() ? size() - offset : 0) +
                                  " remain in the file");
    }
  }

  template <typename T>
  T read(uint64_t offset, std::string_view what) const {
    require(offset, sizeof(T), what);
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;  // the host is little-endian (x86_64, aarch64), as are the files
  }
  uint8_t u8(uint64_t offset, std::string_view what) const { return read<uint8_t>(offset, what); }
  uint16_t u16(uint64_t offset, std::string_view what) const {
    return read<uint16_t>(offset, what);
  }
  uint32_t u32(uint64_t offset, std::string_view what) const {
    return read<uint32_t>(offset, what);
  }
  uint64_t u64(uint64_t offset, std::string_view what) const {
    return read<uint64_t>(offset, what);
  }

  std::span<const std::byte> slice(uint64_t offset, uint64_t length, std::string_view what) const {
    require(offset, length, what);
    return bytes_.subspan(offset, length);
  }

  // A NUL-terminated string starting at offset, at most max_length bytes long;
  // an unterminated string is cut at the buffer's end or at max_length.
  std::string_view c_string(uint64_t offset, uint64_t max_length = 4096) const {
    if (offset >= bytes_.size()) return {};
    const uint64_t limit = std::min<uint64_t>(max_length, bytes_.size() - offset);
    const char* begin = reinterpret_cast<const char*>(bytes_.data() + offset);
    const void* nul = std::memchr(begin, 0, limit);
    return {begin, nul ? static_cast<size_t>(static_cast<const char*>(nul) - begin) : limit};
  }

 private:
  std::span<const std::byte> bytes_;
};

}  // namespace archfit::binary
