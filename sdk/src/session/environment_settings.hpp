#pragma once
// The one reader of the environment variables that shape a run, for the
// CLI, the C ABI and the hosts alike (docs/design.md, "The session"); the
// modules below read none themselves, they are given what is read here:
//
//   ARCHFIT_WHEEL_MAX_RATIO  bytes a named wheel's members may decompress to,
//                            per byte of wheel (default 32)
//   ARCHFIT_WHEEL_MAX_BYTES  never more than this (default 8G; K/M/G/T suffixes)
//   ARCHFIT_CACHE_DIR        the cache folder (else $XDG_CACHE_HOME/archfit,
//                            else ~/.cache/archfit): the scan index and the
//                            kernel cache live there
//   ARCHFIT_KB_DIR           the knowledge base's folder, unless the host or
//                            --kb names one (kb::resolve_kb_dir)
//   ARCHFIT_PLUGIN_PATH      more plugin folders, ':'-separated, and
//   ARCHFIT_PLUGIN_TIMEOUT   each plugin's time limit in seconds
//                            (plugin::PluginEnvironment)
//
// Variables that name where code or facts are loaded from are ignored in a
// setuid process (sys/trust.hpp's trusted_path_variable).
//
// Not yet read here: the kernel cache's ARCHFIT_CACHE_READONLY_DIRS and
// _MAX_BYTES (jit::KernelCache::options_from_environment), ARCHFIT_NVRTC and
// CUDA_HOME (jit/nvrtc/nvrtc_discovery), ARCHFIT_FATBINARY (jit bundle), and
// and, as facts of the environment being judged rather than settings, the
// loader's LD_LIBRARY_PATH and CUDA_HOME (env/cuda_libraries) and the
// VIRTUAL_ENV, CONDA_PREFIX and PATH a bare `archfit check` picks its
// environment by (cli/check_command).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "binary/decompression_budget.hpp"
#include "plugin/plugin_host.hpp"

namespace archfit::session {

inline constexpr const char* kWheelMaxRatioVariable = "ARCHFIT_WHEEL_MAX_RATIO";
inline constexpr const char* kWheelMaxBytesVariable = "ARCHFIT_WHEEL_MAX_BYTES";

struct EnvironmentSettings {
  binary::ArchiveLimits archive_limits;
  // nullopt when no folder can be named (no HOME and no passwd entry): every
  // file is then read, as with --no-index.
  std::optional<std::filesystem::path> cache_dir;
  std::optional<std::filesystem::path> kb_dir;  // ARCHFIT_KB_DIR
  plugin::PluginEnvironment plugins;
  // A malformed value keeps the default and is named here, a sentence each
  // ("archfit: ARCHFIT_WHEEL_MAX_RATIO=x is not a whole number above 0; using 32").
  std::vector<std::string> warnings;
};

// Read now: a Session reads it at each flow for what its settings leave
// unset, so a host that changes a variable between two calls is heard.
EnvironmentSettings read_environment_settings();

}  // namespace archfit::session
