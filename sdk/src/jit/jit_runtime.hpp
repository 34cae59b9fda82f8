#pragma once
// What the jit flows of one owner share — the kernel cache, the NVRTC archfit
// compiles with, and libcuda — each made on first use and kept for the
// runtime's life. A Session (session/session.hpp) owns one; a test makes its
// own. Nothing here is process-wide: two runtimes with different settings
// have their own cache, NVRTC and driver handle (the libraries themselves are
// loaded once per process by the loader, and never unloaded).
//
// A KernelModule and every module it loads hold the runtime, so a module may
// outlive the Session that made it. Thread-safe.
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "jit/cache/kernel_cache.hpp"
#include "jit/cached_compile.hpp"
#include "jit/nvrtc/nvrtc_discovery.hpp"
#include "jit/nvrtc/nvrtc_facts.hpp"
#include "sys/driver_library.hpp"

namespace archfit::jit {

struct JitSettings {
  std::filesystem::path libcuda;  // empty: "libcuda.so.1" through the loader
  // The jit reads no environment variable: a Session fills these from its
  // one reader (session/environment_settings.hpp: ARCHFIT_CACHE_DIR, …,
  // ARCHFIT_NVRTC, CUDA_HOME, LD_LIBRARY_PATH). nullopt: kernels cached in
  // memory only.
  std::optional<KernelCache::Options> cache;
  // nullopt: NvrtcSearch{}, the toolkit at /usr/local/cuda only.
  std::optional<NvrtcSearch> nvrtc_search;
};

class JitRuntime {
 public:
  explicit JitRuntime(JitSettings settings = {});
  JitRuntime(const JitRuntime&) = delete;
  JitRuntime& operator=(const JitRuntime&) = delete;

  const JitSettings& settings() const { return settings_; }

  KernelCache& cache();
  // Known by its recorded facts, loaded only when a compile misses the cache.
  LazyNvrtc& nvrtc();
  // libcuda, checked for the entry points a module needs and initialised
  // (cuInit) on the first call. Throws JitError saying why it cannot be used;
  // the next call tries again.
  const sys::DriverLibrary& driver();

  // `request` compiled for its own target through the cache, as
  // `archfit jit compile` and each child of `jit bundle` do: a target NVRTC
  // does not know is NoTargetError naming the NVRTC and the targets it does.
  CachedCompile compile(const CompileRequest& request);

 private:
  JitSettings settings_;
  // One lock each: a slow cuInit does not hold up a cache lookup.
  std::mutex cache_mutex_, nvrtc_mutex_, driver_mutex_;
  std::unique_ptr<KernelCache> cache_;
  std::unique_ptr<LazyNvrtc> nvrtc_;
  std::unique_ptr<sys::DriverLibrary> driver_;  // set once it passed every check
};

}  // namespace archfit::jit
