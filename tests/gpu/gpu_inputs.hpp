#pragma once
// Where the GPU programs read their inputs: the kernels' sources and the nvcc
// fatbins the build made. Both default to this build's own paths; a pack
// made by tests/gpu/pack.sh runs on another machine, where tests/gpu/run.sh
// names them in ARCHFIT_GPU_KERNELS_DIR and ARCHFIT_GPU_FATBIN_DIR.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace archfit::gpu_tests {

inline std::filesystem::path input_dir(const char* variable, const char* built_in) {
  const char* named = std::getenv(variable);
  return std::filesystem::path(named && *named ? named : built_in);
}

// kernels/: each kernel's .cu, as archfit's NVRTC path compiles it.
inline std::filesystem::path kernels_dir() {
  return input_dir("ARCHFIT_GPU_KERNELS_DIR", ARCHFIT_KERNELS_DIR);
}

// <name>_sass.fatbin and rmsnorm_ptx.fatbin, built by nvcc (tests/gpu/CMakeLists.txt).
inline std::filesystem::path fatbin_dir() {
  return input_dir("ARCHFIT_GPU_FATBIN_DIR", ARCHFIT_GPU_FATBIN_DIR);
}

// The whole file; a missing or unreadable one is an error naming it, never
// an empty source or image that would fail later for a reason nobody sees.
inline std::string read_input(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::runtime_error("cannot read " + path.string());
  return text.str();
}

}  // namespace archfit::gpu_tests
