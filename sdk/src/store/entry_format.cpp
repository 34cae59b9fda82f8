#include "store/entry_format.hpp"

#include <xxhash.h>

#include <cstring>

#include "store/store_key.hpp"

namespace archfit::store {
namespace {

constexpr char kMagic[8] = {'A', 'R', 'C', 'H', 'F', 'I', 'T', 'K'};

void put(std::vector<std::byte>& out, size_t offset, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out[offset + i] = static_cast<std::byte>(value >> (8 * i));
}

uint64_t get(std::span<const std::byte> in, size_t offset, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= std::to_integer<uint64_t>(in[offset + i]) << (8 * i);
  return value;
}

}  // namespace

uint64_t entry_checksum(std::span<const std::byte> payload) {
  return XXH3_64bits(payload.data(), payload.size());
}

std::vector<std::byte> entry_header(std::string_view key, std::span<const std::byte> payload) {
  std::vector<std::byte> header(kEntryHeaderSize + key.size());
  std::memcpy(header.data(), kMagic, sizeof kMagic);
  put(header, 8, kCacheFormat, 4);
  put(header, 12, key.size(), 4);
  put(header, 16, payload.size(), 8);
  put(header, 24, entry_checksum(payload), 8);
  std::memcpy(header.data() + kEntryHeaderSize, key.data(), key.size());
  return header;
}

std::string check_entry_header(std::span<const std::byte> head, uint64_t file_size,
                               std::string_view expected_key, EntryHeader& out) {
  if (head.size() < kEntryHeaderSize || file_size < kEntryHeaderSize)
    return "truncated: " + std::to_string(file_size) + " bytes, shorter than an entry header";
  if (std::memcmp(head.data(), kMagic, sizeof kMagic) != 0) return "not a cache entry (bad magic)";
  if (const uint64_t format = get(head, 8, 4); format != kCacheFormat)
    return "cache format " + std::to_string(format) + ", expected " + std::to_string(kCacheFormat);
  const uint64_t key_length = get(head, 12, 4);
  if (key_length == 0 || key_length > kEntryMaxKeyLength)
    return "bad key length " + std::to_string(key_length);
  if (head.size() < kEntryHeaderSize + key_length) return "truncated inside the key";
  const std::string_view key(reinterpret_cast<const char*>(head.data()) + kEntryHeaderSize,
                             key_length);
  if (key != expected_key) {
    return "holds the entry for key " +
           (is_valid_cache_key(key) ? std::string(key) : std::string("(not a key)")) + ", not " +
           std::string(expected_key);
  }
  const uint64_t payload_size = get(head, 16, 8);
  const uint64_t payload_offset = kEntryHeaderSize + key_length;
  if (file_size < payload_offset || file_size - payload_offset != payload_size) {
    const bool short_file = file_size < payload_offset || file_size - payload_offset < payload_size;
    return (short_file ? "truncated: " : "trailing bytes: ") + std::to_string(file_size) +
           " bytes, the header says " + std::to_string(payload_offset) + " + " +
           std::to_string(payload_size);
  }
  out = {payload_offset, payload_size, get(head, 24, 8)};
  return "";
}

}  // namespace archfit::store
