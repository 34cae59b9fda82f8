#include "jit/cache/cache_key.hpp"

#include <algorithm>

namespace archfit::jit {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

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
  store::KeyHasher hash;
  hash.field("archfit kernel cache format", std::to_string(store::kCacheFormat));
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

}  // namespace archfit::jit
