#pragma once
// The image every test build of a kernel-cache key returns: a few KB that
// differ for every key, so a reader given another key's entry notices.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace archfit::testing {

inline std::vector<std::byte> jit_cache_payload(const std::string& key, size_t size = 4096) {
  std::vector<std::byte> payload(size);
  size_t mix = std::hash<std::string>{}(key);
  for (auto& byte : payload) {
    mix = mix * 6364136223846793005ull + 1442695040888963407ull;
    byte = static_cast<std::byte>(mix >> 56);
  }
  return payload;
}

}  // namespace archfit::testing
