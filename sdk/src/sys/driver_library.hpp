#pragma once
// libcuda, loaded at run time (docs/design.md, decision 1): the one place that opens
// the driver library, looks up its entry points and words its error codes.
// The probe, --confirm and the JIT loader all go through it. Includes cuda.h,
// so only core sources (which see the CUDA headers) include this header.
#include <cuda.h>

#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace archfit::sys {

// Every driver entry point archfit calls; null where the library lacks it.
// cuda.h maps several API names to versioned symbols (cuDeviceTotalMem →
// cuDeviceTotalMem_v2, cuCtxPushCurrent → cuCtxPushCurrent_v2); each is
// looked up by the exact name the driver exports.
struct DriverApi {
  decltype(&cuInit) init = nullptr;
  decltype(&cuDriverGetVersion) driver_get_version = nullptr;
  decltype(&cuGetErrorName) get_error_name = nullptr;
  decltype(&cuGetErrorString) get_error_string = nullptr;
  decltype(&cuDeviceGetCount) device_get_count = nullptr;
  decltype(&cuDeviceGet) device_get = nullptr;
  decltype(&cuDeviceGetName) device_get_name = nullptr;
  decltype(&cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&cuDeviceTotalMem_v2) device_total_mem = nullptr;
  decltype(&cuDeviceGetUuid_v2) device_get_uuid = nullptr;
  decltype(&cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&cuDevicePrimaryCtxRelease_v2) primary_ctx_release = nullptr;
  decltype(&cuCtxPushCurrent_v2) ctx_push_current = nullptr;
  decltype(&cuCtxPopCurrent_v2) ctx_pop_current = nullptr;
  decltype(&cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&cuModuleLoadData) module_load_data = nullptr;
  decltype(&cuModuleUnload) module_unload = nullptr;
  decltype(&cuModuleGetFunction) module_get_function = nullptr;
  decltype(&cuLaunchKernel) launch_kernel = nullptr;
};

// Where the driver is looked for when no library is named, in order:
// "libcuda.so.1" through the loader's search path, then WSL2's
// /usr/lib/wsl/lib/libcuda.so.1 (the Windows driver, which the loader finds
// only where ld.so.conf names that folder). On Windows "nvcuda.dll", which
// the driver installs in System32 (sys/windows/driver_location.cpp).
std::vector<std::filesystem::path> default_driver_libraries();

class DriverLibrary {
 public:
  // Loads `path`, or the first of default_driver_libraries() that loads when
  // it is empty, and looks up every DriverApi entry point. Never throws for a
  // missing or broken library: loaded() is false and failure() says why.
  explicit DriverLibrary(const std::filesystem::path& path = {});
  ~DriverLibrary();
  DriverLibrary(DriverLibrary&&) noexcept;
  DriverLibrary& operator=(DriverLibrary&&) noexcept;

  bool loaded() const { return handle_ != nullptr; }
  // "No NVIDIA driver: libcuda.so.1 could not be loaded, so no GPU can be used (…)."
  const std::string& failure() const { return failure_; }
  // The file that was loaded; empty when none was.
  const std::filesystem::path& location() const { return location_; }
  const DriverApi& api() const { return api_; }

  // Those of `needed` (exported names: "cuInit", "cuCtxPushCurrent_v2") the
  // library lacks, in the order given. A versioned name is also met by the
  // older unversioned symbol where that has the same signature
  // (cuDevicePrimaryCtxRelease, cuDeviceGetUuid).
  std::vector<std::string> lacking(std::initializer_list<std::string_view> needed) const;
  // "The CUDA driver library … lacks basic driver API functions; it is not a working libcuda."
  std::string not_a_driver() const;

  // "CUDA_ERROR_NO_BINARY_FOR_GPU"; "CUDA error 209" when the driver has no name for it.
  std::string error_name(CUresult result) const;
  // "no kernel image is available for execution on the device (209)", from
  // cuGetErrorString; "CUDA error 209" when the driver has no words for it.
  std::string error_text(CUresult result) const;

 private:
  template <typename Function>
  void resolve(std::initializer_list<const char*> names, Function& out);

  struct Handle;
  std::unique_ptr<Handle> handle_;
  std::filesystem::path location_;
  std::string failure_;
  DriverApi api_;
  std::vector<std::string> missing_;  // exported names not found, first of each alternative
};

}  // namespace archfit::sys
