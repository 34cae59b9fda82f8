#include "archive_limits_variables.hpp"

#include <charconv>
#include <cstdlib>
#include <string_view>

#include "jit/cache/cache_location.hpp"

namespace archfit::cli {

binary::ArchiveLimits archive_limits_from_environment(std::ostream& warnings) {
  binary::ArchiveLimits limits;
  if (const char* text = std::getenv(kWheelMaxRatioVariable); text && *text) {
    const std::string_view value = text;
    uint64_t ratio = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), ratio);
    if (error == std::errc() && end == value.data() + value.size() && ratio > 0) {
      limits.max_ratio = ratio;
    } else {
      warnings << "archfit: " << kWheelMaxRatioVariable << "=" << value
               << " is not a whole number above 0; using " << limits.max_ratio << '\n';
    }
  }
  if (const char* text = std::getenv(kWheelMaxBytesVariable); text && *text) {
    if (const auto bytes = jit::parse_byte_count(text)) {
      limits.max_bytes = *bytes;
    } else {
      warnings << "archfit: " << kWheelMaxBytesVariable << "=" << text
               << " is not a byte count (such as 8589934592, 512M or 16G); using "
               << limits.max_bytes << '\n';
    }
  }
  return limits;
}

}  // namespace archfit::cli
