#include "jit/cache/cache_key.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <new>

namespace archfit::jit {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// XXH3-128 over a sequence of length-prefixed fields.
class KeyHasher {
 public:
  KeyHasher() : state_(XXH3_createState()) {
    if (state_ == nullptr) throw std::bad_alloc();
    XXH3_128bits_reset(state_);
  }
  ~KeyHasher() { XXH3_freeState(state_); }
  KeyHasher(const KeyHasher&) = delete;
  KeyHasher& operator=(const KeyHasher&) = delete;

  void number(uint64_t value) {
    unsigned char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(value >> (8 * i));
    XXH3_128bits_update(state_, bytes, sizeof bytes);
  }
  void text(std::string_view value) {
    number(value.size());
    XXH3_128bits_update(state_, value.data(), value.size());
  }
  // A labelled field: the label keeps fields apart even where two are empty.
  void field(std::string_view label, std::string_view value) {
    text(label);
    text(value);
  }

  std::string hex() const {
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

 private:
  XXH3_state_t* state_;
};

}  // namespace

std::vector<std::string> canonical_options(const std::vector<std::string>& options) {
  std::vector<std::string> out;
  for (const auto& option : options) {
    const auto first = std::find_if_not(option.begin(), option.end(), is_space);
    const auto last = std::find_if_not(option.rbegin(), option.rend(), is_space).base();
    if (first < last) out.emplace_back(first, last);
  }
  return out;
}

std::string cache_key(const CacheKeyInput& input) {
  KeyHasher hash;
  hash.field("archfit kernel cache format", std::to_string(kCacheFormat));
  hash.field("nvrtc version", input.nvrtc_version);
  hash.field("nvrtc build", input.nvrtc_build);
  hash.field("target", input.target);
  const auto options = canonical_options(input.options);
  hash.text("options");
  hash.number(options.size());
  for (const auto& option : options) hash.text(option);
  hash.field("source name", input.source_name);
  hash.field("source", input.source);
  std::vector<const std::pair<std::string, std::string>*> headers;
  for (const auto& header : input.headers) headers.push_back(&header);
  std::stable_sort(headers.begin(), headers.end(),
                   [](const auto* a, const auto* b) { return a->first < b->first; });
  hash.text("headers");
  hash.number(headers.size());
  for (const auto* header : headers) {
    hash.text(header->first);
    hash.text(header->second);
  }
  return hash.hex();
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

}  // namespace archfit::jit
