#pragma once
// What `archfit jit compile` and `archfit jit bundle` tell people: which
// NVRTC, which path, how long, what archfit's own scanner found in the
// output, and where the cache and the files are.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "jit/cached_compile.hpp"
#include "jit/fatbin_bundle.hpp"

namespace archfit::render {

// What the command found around one compile.
struct CompileFacts {
  std::string nvrtc;          // NVRTC's description
  bool nvrtc_loaded = false;  // false: known from its discovery record alone
  std::string target;         // the arch asked for: "sm_120", "compute_90"
  std::string scanned;        // the archs scanned in the image, space-separated
  bool confirmed = false;     // the image holds exactly the arch asked for
  std::optional<std::filesystem::path> cache_dir;  // empty: memory only
  std::string output;                              // the file written (-o); "" for none
};

std::string compile_text(const jit::CachedCompile& compiled, const CompileFacts& facts);

// What the command found in the fatbin it wrote.
struct BundleFacts {
  std::string output;         // the fatbin
  std::string scanned;        // the archs scanned in it, space-separated
  std::vector<bool> present;  // per image of the result: found in the fatbin
  uint64_t file_size = 0;
  unsigned jobs = 0;  // compiles at once
};

std::string bundle_text(const jit::BundleResult& result, const BundleFacts& facts);

}  // namespace archfit::render
