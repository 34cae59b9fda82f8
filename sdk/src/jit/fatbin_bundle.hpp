#pragma once
// `archfit jit bundle`: ahead-of-time images of one source for a fleet's
// archs, each compiled through the kernel cache in a process of its own —
// the archfit command itself, as `archfit jit compile --json`, started with
// sys::run_program (posix_spawn; CreateProcessW in a job object): NVRTC
// serialises much of a compile on a process-wide lock, so threads would not
// scale, and fork() beside the command's threads would copy locks they hold
// (and does not exist on Windows) — then put into one fatbin by the
// toolkit's own `fatbinary`.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "jit/jit_runtime.hpp"

namespace archfit::jit {

class BundleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct BundleRequest {
  std::filesystem::path source;
  std::vector<std::string> archs;             // "sm_100", "sm_120", "compute_120"
  std::vector<std::string> options;           // NVRTC options: "-I<dir>", "-DNAME", "--std=c++17"
  std::vector<std::string> name_expressions;  // "rmsnorm<float>"
  std::filesystem::path output;
  unsigned jobs = 0;  // compiles at once; 0: one per CPU
  // The fatbinary to pack with; empty: find_fatbinary({}), the toolkit's at
  // /usr/local/cuda only. A Session names the one its environment gives.
  std::filesystem::path fatbinary;
  // The archfit command that compiles each arch (`archfit jit compile`):
  // the `archfit jit bundle` command names itself.
  std::filesystem::path compiler;
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

// Where fatbinary may be, as the one reader of the environment
// (session/environment_settings.hpp) found the variables that name it.
struct FatbinarySearch {
  std::filesystem::path given;                  // ARCHFIT_FATBINARY: used as it is
  std::vector<std::filesystem::path> toolkits;  // CUDA_HOME, CUDA_PATH: each one's bin/
  std::string path;                             // PATH, ':'-separated
};

// `given`, then each toolkit's bin/, /usr/local/cuda/bin, then `path`; empty
// when there is none.
std::filesystem::path find_fatbinary(const FatbinarySearch& search);

// Throws BundleError naming the arch and carrying NVRTC's own message (its
// whole log) when one fails, or how its process ended when it crashed or ran
// past the time limit, or what to install when fatbinary is missing.
// Each process compiles with `settings`' cache and NVRTC, passed on in the
// variables that name them (ARCHFIT_CACHE_DIR, …, ARCHFIT_NVRTC, CUDA_HOME).
BundleResult build_bundle(const BundleRequest& request, const JitSettings& settings);

}  // namespace archfit::jit
