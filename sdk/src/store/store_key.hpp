#pragma once
// Keys of the on-disk store (docs/design.md, decision 5): XXH3-128 over
// length-prefixed, labelled fields, so that no two different inputs hash the
// same bytes. The kernel cache (jit/cache/cache_key.hpp) and the scan index
// (check/scan_index.hpp) each build their keys with it. Not a cryptographic
// hash: it guards against stale entries, not against someone who can already
// write to the owner-only store directory.
#include <cstdint>
#include <string>
#include <string_view>

struct XXH3_state_s;

namespace archfit::store {

// The store's format. Hashed into every key, written into every entry header
// and naming the directory level entries live under (<dir>/v1/…); bumped
// whenever the entry layout or the meaning of a key input changes.
inline constexpr int kCacheFormat = 1;

// XXH3-128 over a sequence of length-prefixed fields.
class KeyHasher {
 public:
  KeyHasher();
  ~KeyHasher();
  KeyHasher(const KeyHasher&) = delete;
  KeyHasher& operator=(const KeyHasher&) = delete;

  void number(uint64_t value);
  void text(std::string_view value);
  // A labelled field: the label keeps fields apart even where two are empty.
  void field(std::string_view label, std::string_view value);
  // 32 lowercase hex digits.
  std::string hex() const;

 private:
  XXH3_state_s* state_;
};

// The key of a record the store keeps beside compiled images (the NVRTC
// discovery record, the scan index): XXH3-128 over kCacheFormat, the
// record's kind and everything its content depends on. The kind keeps it
// apart from every kernel key.
std::string record_key(std::string_view kind, std::string_view depends_on);

// What the store accepts as a key: 2 to 128 characters from [0-9a-z], so a
// key is always a safe file name. Every KeyHasher::hex() result is one.
bool is_valid_cache_key(std::string_view key);

}  // namespace archfit::store
