#include "sys/library_loading.hpp"

#include <vector>

#include "sys/windows/wide.hpp"

namespace archfit::sys {

namespace fs = std::filesystem;
using namespace archfit::sys::windows;

// GET_MODULE_HANDLE_EX_FLAG_PIN: the module stays until the process ends,
// whatever FreeLibrary is called later.
void keep_loaded(const fs::path& location) {
  HMODULE module = nullptr;
  ::GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_PIN, os_path(location).c_str(), &module);
}

fs::path loaded_library_file(const std::string& name) {
  const HMODULE module = ::GetModuleHandleW(to_wide(name).c_str());
  if (module == nullptr) return {};
  return fs::path(to_wide(module_file_name(module)));
}

// The DLLs a library needs are looked for in its own folder first, as
// Python 3.8+ loads extension modules (LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR).
std::string load_failure_message(const fs::path& library, const std::string& fallback) {
  const HMODULE module =
      ::LoadLibraryExW(os_path(library).c_str(), nullptr,
                       LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
  if (module != nullptr) {
    ::FreeLibrary(module);
    return fallback;
  }
  return error_text(::GetLastError());
}

}  // namespace archfit::sys
