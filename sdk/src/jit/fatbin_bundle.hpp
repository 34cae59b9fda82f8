#pragma once
// `archfit jit bundle`: ahead-of-time images of one source for a fleet's
// archs, compiled in parallel processes (NVRTC serialises much of a compile
// on a process-wide lock, so threads would not scale) through the kernel
// cache, then put into one fatbin by the toolkit's own `fatbinary`.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace archfit::jit {

class BundleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct BundleRequest {
  std::filesystem::path archfit;  // the archfit command that compiles each arch
  std::filesystem::path source;
  std::vector<std::string> archs;         // "sm_100", "sm_120", "compute_120"
  std::vector<std::string> compile_args;  // passed to each `archfit jit compile`
  std::filesystem::path output;
  unsigned jobs = 0;  // processes at once; 0: one per CPU
};

struct BundleImage {
  std::string arch;
  double milliseconds = 0;  // that process's compile (or cache lookup)
  std::string cache;        // "built", "primary", …
};

struct BundleResult {
  std::vector<BundleImage> images;  // in the order of the archs asked for
  std::filesystem::path fatbinary;
  double milliseconds = 0;  // the whole bundle, wall clock
};

// ARCHFIT_FATBINARY, then CUDA_HOME/bin, CUDA_PATH/bin, /usr/local/cuda/bin,
// then PATH; empty when there is none.
std::filesystem::path find_fatbinary();

// Throws BundleError naming the arch and carrying the compile's own output
// when one fails, or what to install when fatbinary is missing.
BundleResult build_bundle(const BundleRequest& request);

}  // namespace archfit::jit
