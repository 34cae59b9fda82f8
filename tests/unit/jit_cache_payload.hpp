#pragma once
// The image every test build of a kernel-cache key returns: a few KB that
// differ for every key, so a reader given another key's entry notices.
#include <cstddef>
#include <cstdio>
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

// The stress run's keys (jit_cache_racer stress): valid cache keys, one per
// index, and the payload each builds, of a size that differs by key.
inline std::string jit_cache_stress_key(size_t index) {
  char text[40];
  std::snprintf(text, sizeof text, "s%031zx", index * 2654435761u);
  return text;
}
inline std::vector<std::byte> jit_cache_stress_payload(const std::string& key) {
  return jit_cache_payload(key, 3000 + static_cast<size_t>(key.back()) * 7);
}

}  // namespace archfit::testing
