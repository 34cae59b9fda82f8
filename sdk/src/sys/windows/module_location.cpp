#include "sys/module_location.hpp"

#include <vector>

#include "sys/windows/wide.hpp"

namespace archfit::sys {

namespace fs = std::filesystem;
using namespace archfit::sys::windows;

// The module holding this code: archfit.dll, or archfit.exe where the core
// is linked into the executable.
fs::path running_module_file() {
  static const int anchor = 0;
  HMODULE module = nullptr;
  if (!::GetModuleHandleExW(
          GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
          reinterpret_cast<LPCWSTR>(&anchor), &module))
    return {};
  const std::string file = module_file_name(module);
  return file.empty() ? fs::path() : fs::path(to_wide(file));
}

fs::path running_module_dir() { return running_module_file().parent_path(); }

}  // namespace archfit::sys
