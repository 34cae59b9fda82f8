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
// and, for the jit runtime (read_jit_settings, when a Session first needs it):
//
//   ARCHFIT_CACHE_DIR        the kernel cache's folder, as above
//   ARCHFIT_CACHE_READONLY_DIRS  prebuilt caches searched after it, ':'-separated
//   ARCHFIT_CACHE_MAX_BYTES  its budget (default 1G; K/M/G/T suffixes)
//   ARCHFIT_NVRTC            a libnvrtc file or folder tried first
//   ARCHFIT_FATBINARY        the fatbinary `jit bundle` packs with, else
//   CUDA_HOME, CUDA_PATH     each one's bin/, and PATH
//
// Variables that name where code or facts are loaded from are ignored in a
// setuid process (sys/trust.hpp's trusted_path_variable).
//
// Read elsewhere, as facts of the environment being judged rather than
// settings: the loader's LD_LIBRARY_PATH and CUDA_HOME (env/cuda_libraries,
// also where NVRTC is looked for) and the VIRTUAL_ENV, CONDA_PREFIX and PATH
// a bare `archfit check` picks its environment by (cli/check_command).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "binary/decompression_budget.hpp"
#include "jit/fatbin_bundle.hpp"
#include "jit/jit_runtime.hpp"
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

// The jit runtime's settings from the environment: the kernel cache (its
// malformed values in Options::notes, warned of when the cache is made) and
// where NVRTC is. libcuda is left to the caller.
jit::JitSettings read_jit_settings();

// Where `jit bundle`'s fatbinary is, from the environment.
jit::FatbinarySearch read_fatbinary_search();

}  // namespace archfit::session
