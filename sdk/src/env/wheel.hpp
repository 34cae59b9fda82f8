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

  // Built for Linux (manylinux/musllinux/linux_*) or for any platform: the
  // only wheels whose shared libraries are the ELF files archfit reads.
  bool targets_linux() const;
};

// Never throws: a file that is not a wheel, or a wheel with no readable
// METADATA, comes back with problems; name, version and tags then come from
// the file name ("name-version[-build]-python-abi-platform.whl").
Wheel read_wheel(const std::filesystem::path& path);

}  // namespace archfit::env
