#pragma once
// The bytes of one kernel-cache entry file. All integers are little-endian:
//
//   offset  size  field
//        0     8  magic "ARCHFITK"
//        8     4  format (kCacheFormat)
//       12     4  key length K (2..128)
//       16     8  payload size N
//       24     8  XXH3-64 of the payload
//       32     K  the key, ASCII
//     32+K     N  the payload: the compiled image
//
// The file is exactly 32 + K + N bytes. Each field is checked on every read,
// so a flipped bit anywhere (header, key or payload), a truncated file, bytes
// appended, or an entry copied under another key's name is refused.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace archfit::store {

inline constexpr size_t kEntryHeaderSize = 32;
inline constexpr size_t kEntryMaxKeyLength = 128;

uint64_t entry_checksum(std::span<const std::byte> payload);

// The first 32 + key.size() bytes of the entry for `key` holding `payload`.
std::vector<std::byte> entry_header(std::string_view key, std::span<const std::byte> payload);

struct EntryHeader {
  uint64_t payload_offset = 0;  // 32 + K
  uint64_t payload_size = 0;
  uint64_t checksum = 0;
};

// Checks the header of an entry file of `file_size` bytes whose first bytes
// are `head` (up to kEntryHeaderSize + kEntryMaxKeyLength of them) against
// `expected_key`. Returns why it cannot be that entry ("truncated: …",
// "holds the entry for key …"), or "" and fills `out` when it can; the
// payload checksum is the caller's to compare.
std::string check_entry_header(std::span<const std::byte> head, uint64_t file_size,
                               std::string_view expected_key, EntryHeader& out);

}  // namespace archfit::store
