#pragma once
// archfit for torch ops: the CUDA implementation of a TORCH_LIBRARY op
// launches an archfit kernel module on the tensor's device and torch's
// current stream there, so the op runs on GPUs its prebuilt images miss
// (archfit compiles its source with NVRTC for the device, docs/op-author-guide.md).
//
//   TORCH_LIBRARY(myops, m) { m.def("rms_norm(Tensor x, Tensor weight, float eps) -> Tensor"); }
//   TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl("rms_norm", &rms_norm_cpu); }    // the reference
//   TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("rms_norm", &rms_norm_cuda); }  // launches below
//
//   at::Tensor rms_norm_cuda(const at::Tensor& x, const at::Tensor& weight, double eps) {
//     static auto* module = new archfit::torch::Module(archfit::torch::Module::from_plugin(
//         "imagegen_ops.rmsnorm"));  // or Module(desc) with the op's own source and fatbin
//     ...
//     void* args[] = {&x_ptr, &w_ptr, &y_ptr, &cols, &eps_f};
//     module->launch(x, "rmsnorm_f32", {{rows, 1, 1}, {256, 1, 1}}, args);
//   }
//
// Header-only over the C ABI's C++ wrapper (archfit.hpp, whose owners free
// every handle), so it links only libarchfit and torch. Every failure is a
// c10::Error (TORCH_CHECK) carrying archfit's own message, which Python sees
// as a RuntimeError; nothing here aborts a host.
//
// Which stream: with ARCHFIT_TORCH_CUDA=1 (define it where you link torch's
// CUDA libraries, c10_cuda among them) the launch goes on
// c10::cuda::getCurrentCUDAStream(device), the stream torch's own kernels on
// that device use, so the op orders correctly with them and under CUDA graphs
// capture. Without it (a CPU-only libtorch, such as Debian's) `current_stream`
// is an error that says so, and launches must name their stream.
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "archfit/archfit.hpp"

#if defined(ARCHFIT_TORCH_CUDA) && ARCHFIT_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace archfit::torch {

// Runs `call` (archfit.hpp, which throws archfit::Error) and throws the
// c10::Error torch reports instead, naming what failed and why.
template <typename Call>
auto checked(const std::string& what, Call&& call) -> decltype(call()) {
  try {
    return call();
  } catch (const archfit::Error& error) {
    TORCH_CHECK(false, "archfit: ", what, ": ", error.what());
  }
}

// The stream torch launches on for `device` now (a cudaStream_t).
inline void* current_stream(c10::Device device) {
  TORCH_CHECK(device.is_cuda(), "archfit: a kernel launches on a CUDA device, not on ",
              device.str());
#if defined(ARCHFIT_TORCH_CUDA) && ARCHFIT_TORCH_CUDA
  return c10::cuda::getCurrentCUDAStream(device.index()).stream();
#else
  TORCH_CHECK(false,
              "archfit: torch's current CUDA stream is unknown here: this op was compiled "
              "without ARCHFIT_TORCH_CUDA=1 (define it where torch's CUDA libraries are linked), "
              "or name the stream in the launch");
  return nullptr;
#endif
}

// Grid, block and dynamic shared memory of one launch; 0 counts as 1.
struct LaunchShape {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t shared_bytes = 0;
};

// One kernel module, loaded on each device the first time a launch asks for
// it (prebuilt image, driver JIT or NVRTC, by archfit's rules) and kept.
// Safe to use from many threads; keep one per op for the life of the
// process: a function-local `static auto* module = new Module(...)` is never
// destroyed, so it never unloads a module after torch's CUDA has shut down
// at exit.
class Module {
 public:
  // The op's own module: source, entry points, prebuilt images
  // (archfit_module_desc). `libcuda` names the driver library; nullptr
  // loads libcuda.so.1 as torch's CUDA does.
  explicit Module(const archfit_module_desc& desc, const char* libcuda = nullptr)
      : context_(make_context(libcuda)) {
    module_.emplace(
        checked(std::string("registering kernel module ") + (desc.name ? desc.name : "(unnamed)"),
                [&] { return context_.module(desc); }));
  }

  // A module a plugin offers by name ("imagegen_ops.rmsnorm"), from the
  // folders given, then ARCHFIT_PLUGIN_PATH and the install's plugins. The
  // plugins are unloaded again before this returns; the module keeps a copy.
  static Module from_plugin(const std::string& module_name,
                            const std::vector<std::string>& plugin_folders = {},
                            const char* libcuda = nullptr) {
    Module out(make_context(libcuda));
    std::vector<const char*> folders;
    for (const auto& folder : plugin_folders) folders.push_back(folder.c_str());
    archfit_plugin_search search{};
    search.struct_size = sizeof search;
    search.paths = folders.data();
    search.path_count = folders.size();
    const archfit::PluginSet plugins =
        checked("loading plugins", [&] { return out.context_.plugins(&search); });
    out.module_.emplace(checked("kernel module " + module_name,
                                [&] { return out.context_.module(plugins, module_name); }));
    return out;
  }

  Module(Module&&) noexcept = default;
  Module& operator=(Module&&) noexcept = default;

  // How the module was loaded on `device` (loading it first if need be):
  // info.path is "prebuilt-sass", "driver-jit" or "nvrtc", info.reason why.
  archfit_load_info info(c10::Device device) {
    Loaded& on = loaded(device);
    return checked("load info", [&] { return on.module.info(); });
  }

  // Launches `function` (an entry point the module names) on `device`'s
  // stream `stream`; `parameters` as cuLaunchKernel takes them.
  void launch(c10::Device device, const std::string& function, const LaunchShape& shape,
              void* stream, void** parameters) {
    Loaded& on = loaded(device);  // refuses a device that is not CUDA
    void* handle = on.function(function);
    archfit_launch_config config{};
    config.struct_size = sizeof config;
    for (int i = 0; i < 3; ++i) {
      config.grid[i] = shape.grid[i];
      config.block[i] = shape.block[i];
    }
    config.shared_bytes = shape.shared_bytes;
    config.stream = stream;
    checked("launching " + function + " on " + device.str(),
            [&] { on.module.launch(handle, config, parameters); });
  }

  // The same on the device of `on` and torch's current stream there.
  void launch(const at::Tensor& on, const std::string& function, const LaunchShape& shape,
              void** parameters) {
    launch(on.device(), function, shape, current_stream(on.device()), parameters);
  }

 private:
  // A module loaded on one device, and the functions looked up in it.
  struct Loaded {
    explicit Loaded(archfit::LoadedModule loaded) : module(std::move(loaded)) {}
    archfit::LoadedModule module;
    std::mutex mutex;
    std::map<std::string, void*, std::less<>> functions;
    void* function(const std::string& name) {
      const std::lock_guard<std::mutex> lock(mutex);
      if (const auto found = functions.find(name); found != functions.end()) return found->second;
      void* handle = checked("looking up kernel " + name, [&] { return module.function(name); });
      functions.emplace(name, handle);
      return handle;
    }
  };

  explicit Module(archfit::Context context) : context_(std::move(context)) {}

  static archfit::Context make_context(const char* libcuda) {
    archfit_context_options options{};
    options.struct_size = sizeof options;
    options.libcuda = libcuda;
    return checked("creating a context", [&] { return archfit::Context(&options); });
  }

  Loaded& loaded(c10::Device device) {
    TORCH_CHECK(device.is_cuda(), "archfit: a kernel module loads on a CUDA device, not on ",
                device.str());
    // "cuda" without an index is torch's current device (device 0 where
    // torch's CUDA is not linked in to ask).
#if defined(ARCHFIT_TORCH_CUDA) && ARCHFIT_TORCH_CUDA
    const int ordinal = device.has_index() ? device.index() : c10::cuda::current_device();
#else
    const int ordinal = device.has_index() ? device.index() : 0;
#endif
    // Held while a first load compiles: another device's first load waits
    // for it, which is rare and never repeats; archfit itself compiles each
    // (module, arch) once however many threads ask.
    const std::lock_guard<std::mutex> lock(*devices_mutex_);
    std::unique_ptr<Loaded>& slot = devices_[ordinal];
    if (!slot) {
      slot = std::make_unique<Loaded>(checked("loading kernel module on " + device.str(),
                                              [&] { return module_->load(ordinal); }));
    }
    return *slot;
  }

  // Destroyed in reverse: loaded modules, then the module, then the context
  // every one of them was made from.
  archfit::Context context_;
  std::optional<archfit::Module> module_;
  std::unique_ptr<std::mutex> devices_mutex_ = std::make_unique<std::mutex>();
  std::map<int, std::unique_ptr<Loaded>> devices_;
};

}  // namespace archfit::torch
