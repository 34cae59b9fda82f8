#pragma once
// The environment variables that change how much a named wheel's members may
// decompress to (binary/decompression_budget.hpp), for `scan` and `check`:
//   ARCHFIT_WHEEL_MAX_RATIO  bytes out per byte of wheel (default 32)
//   ARCHFIT_WHEEL_MAX_BYTES  never more than this (default 8G; K/M/G/T suffixes)
// A trusted wheel past the defaults can be read with larger ones.
#include <ostream>

#include "binary/decompression_budget.hpp"

namespace archfit::cli {

inline constexpr const char* kWheelMaxRatioVariable = "ARCHFIT_WHEEL_MAX_RATIO";
inline constexpr const char* kWheelMaxBytesVariable = "ARCHFIT_WHEEL_MAX_BYTES";

// The defaults with either variable applied; a malformed value is named on
// `warnings` and the default kept.
binary::ArchiveLimits archive_limits_from_environment(std::ostream& warnings);

}  // namespace archfit::cli
