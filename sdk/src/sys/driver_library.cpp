#include "sys/driver_library.hpp"

#include <algorithm>
#include <boost/dll/shared_library.hpp>

#include "sys/library_loading.hpp"

namespace archfit::sys {

struct DriverLibrary::Handle {
  boost::dll::shared_library library;
};

// The first of `names` the library exports; the first name is the one
// cuda.h maps the API to, the others older symbols with the same signature.
template <typename Function>
void DriverLibrary::resolve(std::initializer_list<const char*> names, Function& out) {
  for (const char* name : names) {
    if (handle_->library.has(name)) {
      out = reinterpret_cast<Function>(&handle_->library.get<char>(name));
      return;
    }
  }
  missing_.emplace_back(*names.begin());
}

DriverLibrary::DriverLibrary(const std::filesystem::path& path) {
  const std::vector<std::filesystem::path> candidates =
      path.empty() ? default_driver_libraries() : std::vector<std::filesystem::path>{path};
  const std::filesystem::path& name = candidates.front();
  auto handle = std::make_unique<Handle>();
  std::string why;
  for (const auto& candidate : candidates) {
    // The fallbacks are absolute paths: only one that is there is tried.
    std::error_code missing;
    if (candidate != name && !std::filesystem::exists(candidate, missing)) continue;
    try {
      // rtld_local: archfit's copy of the driver symbols never shadows a host's.
      handle->library.load(
          candidate, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local |
                         (candidate.is_relative() ? boost::dll::load_mode::search_system_folders
                                                  : boost::dll::load_mode::default_mode));
      location_ = handle->library.location();
      break;
    } catch (const std::exception& error) {
      if (why.empty()) why = error.what();
    }
  }
  if (location_.empty()) {
    failure_ = "No NVIDIA driver: " + name.string() +
               " could not be loaded, so no GPU can be used (" + why + ").";
    return;
  }
  // Never unload the driver: after cuInit it runs threads inside the library,
  // and a host (PyTorch) may share it.
  keep_loaded(location_);
  handle_ = std::move(handle);
  resolve({"cuInit"}, api_.init);
  resolve({"cuDriverGetVersion"}, api_.driver_get_version);
  resolve({"cuGetErrorName"}, api_.get_error_name);
  resolve({"cuGetErrorString"}, api_.get_error_string);
  resolve({"cuDeviceGetCount"}, api_.device_get_count);
  resolve({"cuDeviceGet"}, api_.device_get);
  resolve({"cuDeviceGetName"}, api_.device_get_name);
  resolve({"cuDeviceGetAttribute"}, api_.device_get_attribute);
  resolve({"cuDeviceTotalMem_v2"}, api_.device_total_mem);
  resolve({"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}, api_.device_get_uuid);
  resolve({"cuDevicePrimaryCtxRetain"}, api_.primary_ctx_retain);
  resolve({"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, api_.primary_ctx_release);
  resolve({"cuCtxPushCurrent_v2"}, api_.ctx_push_current);
  resolve({"cuCtxPopCurrent_v2"}, api_.ctx_pop_current);
  resolve({"cuCtxSetCurrent"}, api_.ctx_set_current);
  resolve({"cuCtxGetCurrent"}, api_.ctx_get_current);
  resolve({"cuModuleLoadData"}, api_.module_load_data);
  resolve({"cuModuleUnload"}, api_.module_unload);
  resolve({"cuModuleGetFunction"}, api_.module_get_function);
  resolve({"cuLaunchKernel"}, api_.launch_kernel);
}

DriverLibrary::~DriverLibrary() = default;
DriverLibrary::DriverLibrary(DriverLibrary&&) noexcept = default;
DriverLibrary& DriverLibrary::operator=(DriverLibrary&&) noexcept = default;

std::vector<std::string> DriverLibrary::lacking(
    std::initializer_list<std::string_view> needed) const {
  if (!loaded()) return {needed.begin(), needed.end()};
  std::vector<std::string> out;
  for (const std::string_view name : needed) {
    if (std::find(missing_.begin(), missing_.end(), name) != missing_.end()) out.emplace_back(name);
  }
  return out;
}

std::string DriverLibrary::not_a_driver() const {
  return "The CUDA driver library " + location_.string() +
         " lacks basic driver API functions; it is not a working libcuda.";
}

std::string DriverLibrary::error_name(CUresult result) const {
  const char* name = nullptr;
  if (api_.get_error_name && api_.get_error_name(result, &name) == CUDA_SUCCESS && name)
    return name;
  return "CUDA error " + std::to_string(static_cast<int>(result));
}

std::string DriverLibrary::error_text(CUresult result) const {
  const char* text = nullptr;
  if (api_.get_error_string && api_.get_error_string(result, &text) == CUDA_SUCCESS && text) {
    return std::string(text) + " (" + std::to_string(static_cast<int>(result)) + ")";
  }
  return "CUDA error " + std::to_string(static_cast<int>(result));
}

}  // namespace archfit::sys
