// The C ABI of jit/kernel_module: register, load per device, look up, launch.
#include <cstddef>
#include <memory>

#include "guard.hpp"
#include "handles.hpp"
#include "jit/module_desc.hpp"

using archfit::capi::ApiError;
using archfit::capi::guarded;
using archfit::capi::require_argument;
using archfit::capi::write_output;
namespace jit = archfit::jit;

namespace {

// A load or launch that failed: nothing can run there (unsupported), or the
// driver or NVRTC failed (I/O in the ABI's terms).
template <typename Body>
void translate_jit_errors(Body&& body) {
  try {
    body();
  } catch (const jit::JitError& error) {
    throw ApiError{error.nothing_runs() ? ARCHFIT_ERROR_UNSUPPORTED : ARCHFIT_ERROR_IO,
                   error.what()};
  } catch (const jit::NvrtcError& error) {
    throw ApiError{ARCHFIT_ERROR_IO, error.what()};
  }
}

// The body of archfit_loaded_module_create, under the name it was called by
// (archfit_module_load, as the first release named it, is the same call).
archfit_status load_module_as(const char* function, archfit_module* module, int ordinal,
                              archfit_loaded_module** out_loaded) {
  return guarded(function, [&] {
    require_argument(module, "module");
    require_argument(out_loaded, "out_loaded");
    auto handle = std::make_unique<archfit_loaded_module>();
    translate_jit_errors([&] { handle->loaded = module->module->load(ordinal); });
    handle->path = std::string(jit::to_string(handle->loaded->report().path));
    *out_loaded = handle.release();
  });
}

}  // namespace

extern "C" {

archfit_status archfit_module_create(archfit_context* context, const archfit_module_desc* given,
                                     archfit_module** out_module) noexcept {
  return guarded(__func__, [&] {
    require_argument(context, "context");
    require_argument(given, "desc");
    require_argument(out_module, "out_module");
    const auto desc = archfit::capi::read_options(given, "archfit_module_desc");
    jit::KernelModuleSpec spec;
    try {
      spec = jit::spec_from_desc(desc);
    } catch (const jit::ModuleDescError& error) {
      throw ApiError{ARCHFIT_ERROR_INVALID_ARGUMENT, error.what()};
    }
    auto handle = std::make_unique<archfit_module>();
    try {
      handle->module = context->session.module(std::move(spec));
    } catch (const jit::JitError& error) {
      throw ApiError{ARCHFIT_ERROR_INVALID_ARGUMENT, error.what()};
    }
    *out_module = handle.release();
  });
}

void archfit_module_destroy(archfit_module* module) noexcept { delete module; }

archfit_status archfit_loaded_module_create(archfit_module* module, int ordinal,
                                            archfit_loaded_module** out_loaded) noexcept {
  return load_module_as(__func__, module, ordinal, out_loaded);
}

archfit_status archfit_module_load(archfit_module* module, int ordinal,
                                   archfit_loaded_module** out_loaded) noexcept {
  return load_module_as(__func__, module, ordinal, out_loaded);
}

void archfit_loaded_module_destroy(archfit_loaded_module* loaded) noexcept { delete loaded; }

archfit_status archfit_loaded_module_function(const archfit_loaded_module* loaded,
                                              const char* entry_point,
                                              void** out_function) noexcept {
  return guarded(__func__, [&] {
    require_argument(loaded, "loaded");
    require_argument(entry_point, "entry_point");
    require_argument(out_function, "out_function");
    void* function = nullptr;
    translate_jit_errors([&] { function = loaded->loaded->function(entry_point); });
    *out_function = function;
  });
}

archfit_status archfit_loaded_module_launch(const archfit_loaded_module* loaded, void* function,
                                            const archfit_launch_config* given,
                                            void** parameters) noexcept {
  return guarded(__func__, [&] {
    require_argument(loaded, "loaded");
    require_argument(function, "function");
    require_argument(given, "config");
    const auto config = archfit::capi::read_options(given, "archfit_launch_config");
    auto at_least_one = [](uint32_t n) { return n == 0 ? 1u : n; };
    translate_jit_errors([&] {
      loaded->loaded->launch(function, at_least_one(config.grid[0]), at_least_one(config.grid[1]),
                             at_least_one(config.grid[2]), at_least_one(config.block[0]),
                             at_least_one(config.block[1]), at_least_one(config.block[2]),
                             config.shared_bytes, config.stream, parameters);
    });
  });
}

archfit_status archfit_loaded_module_info(const archfit_loaded_module* loaded,
                                          archfit_load_info* out_info) noexcept {
  return guarded(__func__, [&] {
    require_argument(loaded, "loaded");
    require_argument(out_info, "out_info");
    const jit::LoadReport& report = loaded->loaded->report();
    archfit_load_info info{};
    info.path = loaded->path.c_str();
    info.arch = report.arch.c_str();
    info.reason = report.reason.c_str();
    info.cache = report.cache_source.c_str();
    info.device_name = report.device_name.c_str();
    info.milliseconds = report.milliseconds;
    write_output(out_info, info, offsetof(archfit_load_info, milliseconds) + sizeof(double),
                 "out_info", "archfit_load_info");
  });
}

}  // extern "C"
