#pragma once
// The one reader of the environment variables that shape a run's resources,
// for the CLI, the C ABI and the hosts alike (docs/design.md, "The session"):
//
//   ARCHFIT_WHEEL_MAX_RATIO  bytes a named wheel's members may decompress to,
//                            per byte of wheel (default 32)
//   ARCHFIT_WHEEL_MAX_BYTES  never more than this (default 8G; K/M/G/T suffixes)
//   ARCHFIT_CACHE_DIR        the cache folder (else $XDG_CACHE_HOME/archfit,
//                            else ~/.cache/archfit): the scan index and the
//                            kernel cache live there
//
// The kernel cache's own variables (ARCHFIT_CACHE_DIR, _READONLY_DIRS,
// _MAX_BYTES) are read when the cache is first used
// (jit::KernelCache::options_from_environment), ARCHFIT_KB_DIR is read where the knowledge base is
// found (kb/kb_dir.cpp), ARCHFIT_NVRTC, CUDA_HOME and the loader's path where NVRTC is
// (jit/nvrtc/nvrtc_discovery.hpp), ARCHFIT_PLUGIN_PATH and
// ARCHFIT_PLUGIN_TIMEOUT where plugins are: each through sys/trust.hpp's
// rule for variables that name where code is loaded from.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "binary/decompression_budget.hpp"

namespace archfit::session {

inline constexpr const char* kWheelMaxRatioVariable = "ARCHFIT_WHEEL_MAX_RATIO";
inline constexpr const char* kWheelMaxBytesVariable = "ARCHFIT_WHEEL_MAX_BYTES";

struct EnvironmentSettings {
  binary::ArchiveLimits archive_limits;
  // nullopt when no folder can be named (no HOME and no passwd entry): every
  // file is then read, as with --no-index.
  std::optional<std::filesystem::path> cache_dir;
  // A malformed value keeps the default and is named here, a sentence each
  // ("archfit: ARCHFIT_WHEEL_MAX_RATIO=x is not a whole number above 0; using 32").
  std::vector<std::string> warnings;
};

// Read now: a Session reads it at each flow for what its settings leave
// unset, so a host that changes a variable between two calls is heard.
EnvironmentSettings read_environment_settings();

}  // namespace archfit::session
