#pragma once
// An op's kernel module, registered once and loaded per device (docs/design.md,
// the jit step of "The flow of data"): a compatible prebuilt image, else
// prebuilt PTX for the driver, else the source compiled by NVRTC through the
// kernel cache; then cuModuleLoadData in the device's primary context (so it
// cooperates with PyTorch), cuModuleGetFunction and cuLaunchKernel.
// Thread-safe: many threads loading the same module on the same device load
// (and compile) it once.
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "binary/image.hpp"
#include "jit/jit_runtime.hpp"
#include "jit/selection.hpp"

namespace archfit::jit {

// Loading or launching failed; the message names the module, the device, the
// path tried and the driver's or NVRTC's own words.
class JitError : public std::runtime_error {
 public:
  // nothing_runs: no image can run on the device and none can be compiled
  // for it; else the driver or NVRTC failed.
  explicit JitError(const std::string& message, bool nothing_runs = false)
      : std::runtime_error(message), nothing_runs_(nothing_runs) {}
  bool nothing_runs() const { return nothing_runs_; }

 private:
  bool nothing_runs_;
};

struct KernelModuleSpec {
  std::string name;                            // for messages: "fastops.rmsnorm"
  std::string source;                          // CUDA C++; empty: prebuilt images only
  std::string source_name = "kernel.cu";       // names the source in NVRTC's log
  std::map<std::string, std::string> headers;  // #include name → content
  std::vector<std::string> options;            // NVRTC options, not the arch
  // Kernels to look up: extern "C" names, mangled names, or C++ name
  // expressions ("rmsnorm<float>") that NVRTC instantiates and lowers.
  std::vector<std::string> entry_points;
  std::vector<std::byte> prebuilt;  // a fatbin, cubin or PTX; empty: none
};

// Which path a load took and why: what `archfit_module_info` reports.
struct LoadReport {
  JitPath path = JitPath::nvrtc;
  std::string arch;          // "sm_90", "compute_80", "sm_120"
  std::string reason;        // a sentence
  bool cache_hit = false;    // NVRTC path: the image came from the kernel cache
  std::string cache_source;  // "memory" | "primary" | "readonly" | "built"; "" off the NVRTC path
  double milliseconds = 0;   // selection, compile or cache, and the driver's load
  std::string nvrtc;         // NVRTC::describe() when NVRTC was used
  std::string device_name;
  compat::ComputeCapability device_cc;
};

struct LoadedModuleState;  // driver handles; kernel_module.cpp

// A module loaded on one device; unloaded (cuModuleUnload, then the primary
// context released) when the last handle goes.
class LoadedModule {
 public:
  ~LoadedModule();
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  const LoadReport& report() const { return report_; }
  // The CUfunction of an entry point registered with the module, as a void*
  // (the C ABI's opaque handle); JitError when the driver does not find it.
  void* function(const std::string& entry_point) const;
  // cuLaunchKernel in the module's context. `stream`: a CUstream or
  // cudaStream_t, or null for the default stream.
  void launch(void* function, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
              unsigned block_y, unsigned block_z, unsigned shared_bytes, void* stream,
              void** parameters) const;

 private:
  friend class KernelModule;
  LoadedModule() = default;
  std::unique_ptr<LoadedModuleState> state_;
  LoadReport report_;
  std::string module_name_;
  std::map<std::string, std::string> lowered_;  // name expression → mangled name
};

class KernelModule {
 public:
  // Scans the prebuilt bytes; JitError when the spec can never load (no
  // source and no device code in the prebuilt bytes, no entry points).
  // `runtime` (the owner's libcuda, kernel cache and NVRTC; not null) is
  // held by the module and by every module it loads.
  KernelModule(KernelModuleSpec spec, std::shared_ptr<JitRuntime> runtime);
  const KernelModuleSpec& spec() const { return spec_; }

  // The module on device `ordinal`, loaded the first time it is asked for.
  std::shared_ptr<LoadedModule> load(int ordinal);

 private:
  std::shared_ptr<LoadedModule> load_now(int ordinal);
  KernelModuleSpec spec_;
  std::shared_ptr<JitRuntime> runtime_;
  binary::FileScan prebuilt_scan_;
  std::mutex mutex_;
  std::map<int, std::shared_ptr<std::mutex>> loading_;  // held while a device loads
  std::map<int, std::shared_ptr<LoadedModule>> loaded_;
};

}  // namespace archfit::jit
