#pragma once
// What a wheel file says about itself, read from inside the zip without
// installing it: the distribution's name and version (its METADATA), the
// tags it was built for (its WHEEL file) and, for torch, torch/version.py.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "python_env.hpp"

namespace archfit::env {

struct Wheel {
  std::filesystem::path path;
  std::string name;               // "xformers"
  std::string version;            // "0.0.28.post3"
  std::vector<std::string> tags;  // "cp311-cp311-manylinux_2_28_x86_64", one per WHEEL Tag line
  std::optional<TorchBuild> torch;
  std::vector<EnvProblem> problems;

  // Built for Linux (manylinux/musllinux/linux_*), Windows (win_amd64,
  // win_arm64) or any platform: the wheels whose libraries are the ELF and PE
  // files archfit reads. Not macOS, which no CUDA build targets.
  bool targets_a_read_platform() const;
  // Built for Windows: its fixes are Windows commands (PyPI's torch for
  // Windows is CPU-only).
  bool targets_windows() const;
};

// Never throws: a file that is not a wheel, or a wheel with no readable
// METADATA, comes back with problems; name, version and tags then come from
// the file name ("name-version[-build]-python-abi-platform.whl").
Wheel read_wheel(const std::filesystem::path& path);

}  // namespace archfit::env
