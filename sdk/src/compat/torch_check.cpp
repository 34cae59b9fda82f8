#include "torch_check.hpp"

#include <optional>
#include <string_view>

namespace archfit::compat {

namespace {

// torch's _extract_arch_version: the digits after the first '_' ("sm_90a" → 90).
std::optional<uint32_t> torch_arch_number(std::string_view entry) {
  const auto underscore = entry.find('_');
  if (underscore == std::string_view::npos) return std::nullopt;
  uint32_t value = 0;
  bool any = false;
  for (const char c : entry.substr(underscore + 1)) {
    if (c < '0' || c > '9') continue;
    if (value > 100000) return std::nullopt;
    value = value * 10 + static_cast<uint32_t>(c - '0');
    any = true;
  }
  return any ? std::optional(value) : std::nullopt;
}

}  // namespace

bool torch_check_cubins_passes(std::span<const std::string> arch_list, ComputeCapability device) {
  if (arch_list.empty()) return true;
  for (const std::string& entry : arch_list) {
    if (entry.find("sm_") == std::string::npos) continue;
    const auto sm = torch_arch_number(entry);
    if (sm && *sm / 10 == device.major) return true;
  }
  return false;
}

}  // namespace archfit::compat
