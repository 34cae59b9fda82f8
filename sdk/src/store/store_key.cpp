#include "store/store_key.hpp"

#include <xxhash.h>

#include <algorithm>
#include <new>

namespace archfit::store {

KeyHasher::KeyHasher() : state_(XXH3_createState()) {
  if (state_ == nullptr) throw std::bad_alloc();
  XXH3_128bits_reset(state_);
}

KeyHasher::~KeyHasher() { XXH3_freeState(state_); }

void KeyHasher::number(uint64_t value) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(value >> (8 * i));
  XXH3_128bits_update(state_, bytes, sizeof bytes);
}

void KeyHasher::text(std::string_view value) {
  number(value.size());
  XXH3_128bits_update(state_, value.data(), value.size());
}

void KeyHasher::field(std::string_view label, std::string_view value) {
  text(label);
  text(value);
}

std::string KeyHasher::hex() const {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits_digest(state_));
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char byte : canonical.digest) {
    out += kDigits[byte >> 4];
    out += kDigits[byte & 15];
  }
  return out;
}

std::string record_key(std::string_view kind, std::string_view depends_on) {
  KeyHasher hash;
  hash.field("archfit kernel cache format", std::to_string(kCacheFormat));
  hash.field("record", kind);
  hash.field("depends on", depends_on);
  return hash.hex();
}

bool is_valid_cache_key(std::string_view key) {
  if (key.size() < 2 || key.size() > 128) return false;
  return std::all_of(key.begin(), key.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'); });
}

}  // namespace archfit::store
