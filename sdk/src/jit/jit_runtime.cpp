#include "jit_runtime.hpp"

#include "jit/kernel_module.hpp"
#include "jit/nvrtc/target_plan.hpp"

namespace archfit::jit {

JitRuntime::JitRuntime(JitSettings settings) : settings_(std::move(settings)) {}

KernelCache& JitRuntime::cache() {
  const std::lock_guard lock(cache_mutex_);
  if (!cache_) {
    cache_ =
        std::make_unique<KernelCache>(settings_.cache ? *settings_.cache : KernelCache::Options{});
  }
  return *cache_;
}

LazyNvrtc& JitRuntime::nvrtc() {
  const std::lock_guard lock(nvrtc_mutex_);
  if (!nvrtc_)
    nvrtc_ = std::make_unique<LazyNvrtc>(settings_.nvrtc_search ? *settings_.nvrtc_search
                                                                : NvrtcSearch{});
  return *nvrtc_;
}

const sys::DriverLibrary& JitRuntime::driver() {
  const std::lock_guard lock(driver_mutex_);
  if (driver_) return *driver_;
  auto library = std::make_unique<sys::DriverLibrary>(settings_.libcuda);
  if (!library->loaded()) throw JitError(library->failure());
  const auto missing = library->lacking(
      {"cuInit", "cuDeviceGet", "cuDeviceGetAttribute", "cuDevicePrimaryCtxRetain",
       "cuDevicePrimaryCtxRelease_v2", "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2",
       "cuModuleLoadData", "cuModuleUnload", "cuModuleGetFunction", "cuLaunchKernel"});
  if (!missing.empty()) throw JitError(library->not_a_driver());
  if (const CUresult result = library->api().init(0); result != CUDA_SUCCESS)
    throw JitError("cuInit failed: " + library->error_text(result));
  driver_ = std::move(library);
  return *driver_;
}

CachedCompile JitRuntime::compile(const CompileRequest& request) {
  return compile_cached(
      nvrtc(), cache(), request, [&](const NvrtcFacts& facts, CompileRequest& prepared) {
        require_known_target(prepared.target, facts.supported_archs, facts.description);
      });
}

}  // namespace archfit::jit
