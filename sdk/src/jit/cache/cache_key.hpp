#pragma once
// The kernel cache's key (docs/design.md, decision 6): one hash over everything that
// changes what NVRTC produces, so that a changed input never meets a stale entry.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/store_key.hpp"

namespace archfit::jit {

// Everything that can change the compiled image. The compile layer fills it
// in from what it really passes to NVRTC, with a fixed -frandom-seed among the
// options so that the output is reproducible.
struct CacheKeyInput {
  std::string nvrtc_version;  // "13.0", from nvrtcVersion
  std::string nvrtc_build;    // the compiler's build, e.g. "V13.0.88 CL-36424714"
  std::string target;         // exactly as compiled for, suffix included: "sm_120a", "compute_120"
  std::vector<std::string> options;  // every other option passed to NVRTC
  std::string source_name;           // the name NVRTC writes into line info and messages
  std::string source;
  // Header name → content, as given to nvrtcCreateProgram. Files that an
  // -I option makes NVRTC read from disk are not hashed: what is not a
  // header here must come with the NVRTC build (the toolkit's own headers).
  std::vector<std::pair<std::string, std::string>> headers;
};

// The options as the key sees them: each trimmed of surrounding whitespace,
// empty ones dropped, order kept. Order is never canonicalised: a later -D
// overrides an earlier one and -I order is the search order, so `-DA -DB`
// and `-DB -DA` may compile differently and get different keys.
std::vector<std::string> canonical_options(const std::vector<std::string>& options);

// 32 lowercase hex digits: XXH3-128 over kCacheFormat and every field of
// `input`, each length-prefixed so that no two different inputs hash the
// same bytes. Options enter in canonical form; headers are sorted by name
// (stably: NVRTC finds a header by its name, not by its position). Not a
// cryptographic hash: it guards against stale entries, not against someone
// who can already write to the owner-only cache directory.
std::string cache_key(const CacheKeyInput& input);

}  // namespace archfit::jit
