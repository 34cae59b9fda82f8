#include "sys/module_location.hpp"

#include <dlfcn.h>

#include <string>
#include <system_error>

namespace archfit::sys {

namespace fs = std::filesystem;

// For an executable dladdr names what argv[0] said (a bare "archfit", or a
// symlink elsewhere), so the kernel's /proc/self/exe is asked instead.
fs::path running_module_file() {
  Dl_info info{};
  static const int anchor = 0;
  if (dladdr(&anchor, &info) != 0 && info.dli_fname && fs::path(info.dli_fname).is_absolute() &&
      fs::path(info.dli_fname).filename().string().find(".so") != std::string::npos) {
    return info.dli_fname;
  }
  std::error_code error;
  fs::path executable = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path() : executable;
}

fs::path running_module_dir() { return running_module_file().parent_path(); }

}  // namespace archfit::sys
