#include "kernel_module.hpp"

#include <chrono>
#include <optional>

#include "binary/scanner.hpp"
#include "jit/cached_compile.hpp"
#include "jit/nvrtc/nvrtc.hpp"
#include "jit/nvrtc/nvrtc_facts.hpp"
#include "jit/nvrtc/target_plan.hpp"
#include "sys/driver_library.hpp"

namespace archfit::jit {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

bool is_name_expression(const std::string& entry) {
  return entry.find_first_of("<(:") != std::string::npos;
}

void check(const sys::DriverLibrary& driver, CUresult result, const std::string& what) {
  if (result != CUDA_SUCCESS) throw JitError(what + ": " + driver.error_text(result));
}

// The device's primary context, current on this thread for the scope.
class ContextScope {
 public:
  ContextScope(const sys::DriverLibrary& driver, CUcontext context) : driver_(driver) {
    check(driver_, driver_.api().ctx_push_current(context), "cuCtxPushCurrent");
  }
  ~ContextScope() {
    CUcontext popped = nullptr;
    driver_.api().ctx_pop_current(&popped);
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  const sys::DriverLibrary& driver_;
};

}  // namespace

struct LoadedModuleState {
  std::shared_ptr<JitRuntime> runtime;  // keeps the driver below loaded
  const sys::DriverLibrary* driver = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
};

LoadedModule::~LoadedModule() {
  if (!state_ || !state_->driver) return;
  const auto& api = state_->driver->api();
  if (state_->module && api.ctx_push_current(state_->context) == CUDA_SUCCESS) {
    api.module_unload(state_->module);
    CUcontext popped = nullptr;
    api.ctx_pop_current(&popped);
  }
  if (state_->context) api.primary_ctx_release(state_->device);
}

void* LoadedModule::function(const std::string& entry_point) const {
  const auto lowered = lowered_.find(entry_point);
  const std::string& name = lowered == lowered_.end() ? entry_point : lowered->second;
  CUfunction function = nullptr;
  const CUresult result =
      state_->driver->api().module_get_function(&function, state_->module, name.c_str());
  if (result != CUDA_SUCCESS) {
    throw JitError(module_name_ + ": no kernel " + entry_point +
                   (name == entry_point ? "" : " (" + name + ")") + " in the image loaded for " +
                   report_.device_name + " (" + report_.arch +
                   "): " + state_->driver->error_text(result));
  }
  return reinterpret_cast<void*>(function);
}

void LoadedModule::launch(void* function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                          unsigned block_x, unsigned block_y, unsigned block_z,
                          unsigned shared_bytes, void* stream, void** parameters) const {
  if (!function) throw JitError(module_name_ + ": launch of a null function");
  const ContextScope scope(*state_->driver, state_->context);
  const CUresult result = state_->driver->api().launch_kernel(
      reinterpret_cast<CUfunction>(function), grid_x, grid_y, grid_z, block_x, block_y, block_z,
      shared_bytes, reinterpret_cast<CUstream>(stream), parameters, nullptr);
  if (result != CUDA_SUCCESS) {
    throw JitError(module_name_ + ": cuLaunchKernel on " + report_.device_name +
                   " failed: " + state_->driver->error_text(result));
  }
}

KernelModule::KernelModule(KernelModuleSpec spec, std::shared_ptr<JitRuntime> runtime)
    : spec_(std::move(spec)), runtime_(std::move(runtime)) {
  if (!runtime_) throw JitError(spec_.name + ": a kernel module needs a jit runtime");
  if (spec_.entry_points.empty())
    throw JitError(spec_.name + ": register at least one entry point (a kernel name)");
  if (!spec_.prebuilt.empty()) prebuilt_scan_ = binary::scan_bytes(spec_.prebuilt, spec_.name);
  if (spec_.source.empty() && !prebuilt_scan_.has_device_code()) {
    throw JitError(spec_.name + ": no CUDA source and no device code in the prebuilt bytes" +
                   (prebuilt_scan_.problems.empty()
                        ? std::string()
                        : " (" + prebuilt_scan_.problems[0].message + ")"));
  }
}

std::shared_ptr<LoadedModule> KernelModule::load(int ordinal) {
  std::shared_ptr<std::mutex> device_mutex;
  {
    const std::lock_guard lock(mutex_);
    if (const auto found = loaded_.find(ordinal); found != loaded_.end()) return found->second;
    auto& slot = loading_[ordinal];
    if (!slot) slot = std::make_shared<std::mutex>();
    device_mutex = slot;
  }
  // One thread loads; the others wait here, then find it. A load that throws
  // stores nothing, so the next request tries again.
  const std::lock_guard device_lock(*device_mutex);
  {
    const std::lock_guard lock(mutex_);
    if (const auto found = loaded_.find(ordinal); found != loaded_.end()) return found->second;
  }
  auto module = load_now(ordinal);
  const std::lock_guard lock(mutex_);
  return loaded_[ordinal] = std::move(module);
}

std::shared_ptr<LoadedModule> KernelModule::load_now(int ordinal) {
  const auto start = Clock::now();
  const sys::DriverLibrary& driver = runtime_->driver();
  const auto& api = driver.api();
  std::shared_ptr<LoadedModule> loaded(new LoadedModule());
  loaded->module_name_ = spec_.name;
  loaded->state_ = std::make_unique<LoadedModuleState>();
  auto& state = *loaded->state_;
  state.runtime = runtime_;
  state.driver = &driver;
  const std::string where = spec_.name + " on GPU " + std::to_string(ordinal);
  check(driver, api.device_get(&state.device, ordinal), where + ": cuDeviceGet");
  int major = 0, minor = 0;
  check(
      driver,
      api.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, state.device),
      where + ": compute capability");
  check(
      driver,
      api.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, state.device),
      where + ": compute capability");
  LoadReport& report = loaded->report_;
  report.device_cc = {static_cast<uint32_t>(major), static_cast<uint32_t>(minor)};
  char name[256] = {};
  if (api.device_get_name && api.device_get_name(name, sizeof name, state.device) == CUDA_SUCCESS)
    report.device_name = name;
  if (report.device_name.empty()) report.device_name = "GPU " + std::to_string(ordinal);
  check(driver, api.primary_ctx_retain(&state.context, state.device),
        where + ": cuDevicePrimaryCtxRetain");

  KernelCache& cache = runtime_->cache();
  LazyNvrtc& nvrtc = runtime_->nvrtc();
  const auto plan_for_device = [&] {
    const NvrtcFacts facts = nvrtc.facts(cache);
    return plan_target(report.device_cc, facts.supported_archs, {facts.version});
  };
  // The driver's PTX limit is not known from the driver API alone; the
  // judgement assumes it is new enough, and a refusal below falls back.
  const compat::Driver judge_driver{};
  const Selection selection = [&] {
    try {
      return select_path(prebuilt_scan_, report.device_cc, judge_driver, !spec_.source.empty(),
                         plan_for_device);
    } catch (const SelectionError& error) {
      throw JitError(where + ": " + error.what(), /*nothing_runs=*/true);
    }
  }();

  auto load_image = [&](const std::vector<std::byte>& image) {
    const ContextScope scope(driver, state.context);
    return api.module_load_data(&state.module, image.data());
  };

  CUresult result = CUDA_ERROR_NO_BINARY_FOR_GPU;
  std::string refused;
  if (selection.path != JitPath::nvrtc) {
    report.path = selection.path;
    report.arch = selection.arch;
    report.reason = selection.reason;
    // PTX handed over as text needs its NUL.
    std::vector<std::byte> image = spec_.prebuilt;
    if (prebuilt_scan_.format == binary::FileFormat::ptx) image.push_back(std::byte{0});
    result = load_image(image);
    if (result != CUDA_SUCCESS) {
      refused = "the driver refused the prebuilt " + selection.arch + " image (" +
                driver.error_name(result) + ")";
      if (spec_.source.empty()) throw JitError(where + ": " + refused);
    }
  }
  if (result != CUDA_SUCCESS) {
    const auto no_nvrtc = [&](const std::exception& error) {
      return JitError(where + ": " + (refused.empty() ? "" : refused + ", and ") +
                      "no NVRTC to compile the source: " + error.what());
    };
    CompileRequest request;
    request.source = spec_.source;
    request.source_name = spec_.source_name;
    request.headers = spec_.headers;
    request.options = spec_.options;
    for (const auto& entry : spec_.entry_points)
      if (is_name_expression(entry)) request.name_expressions.push_back(entry);
    // Planned from NVRTC's recorded facts, so that a cache hit loads no NVRTC.
    TargetPlan target;
    const CachedCompile compiled = [&] {
      try {
        return compile_cached(
            nvrtc, cache, request, [&](const NvrtcFacts& facts, CompileRequest& prepared) {
              target = plan_target(report.device_cc, facts.supported_archs, {facts.version});
              prepared.target = target.target;
            });
      } catch (const NoTargetError& error) {
        throw JitError(where + ": " + error.what(), /*nothing_runs=*/true);
      } catch (const NvrtcCompileError&) {
        throw;  // keeps its type, and NVRTC's whole log
      } catch (const NvrtcError& error) {
        throw no_nvrtc(error);
      }
    }();
    report.arch = target.target;
    report.reason = refused.empty() ? selection.reason
                                    : refused + "; compiled with NVRTC instead: " + target.reason;
    for (const auto& [expression, lowered] : compiled.lowered_names)
      loaded->lowered_[expression] = lowered;
    report.path = JitPath::nvrtc;
    report.cache_hit = compiled.source != CacheSource::built;
    report.cache_source = to_string(compiled.source);
    report.nvrtc = nvrtc.facts(cache).description;
    result = load_image(*compiled.image);
    if (result != CUDA_SUCCESS) {
      throw JitError(where + ": the driver refused NVRTC's " + report.arch +
                     " image: " + driver.error_text(result));
    }
  }
  report.milliseconds = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return loaded;
}

}  // namespace archfit::jit
