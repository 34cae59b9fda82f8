#include "sys/library_loading.hpp"

#include <cstdlib>
#include <vector>

#include "sys/trust.hpp"
#include "sys/user_folders.hpp"
#include "sys/utf8_path.hpp"
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

// PATH ends LoadLibrary's standard search order (after the program's
// folder, System32 and the current folder). A process whose PATH holds no
// CUDA folder still finds what CUDA_PATH or a wheel names.
LoaderSearch loader_search() {
  LoaderSearch search;
  if (const char* list = trusted_path_variable(kLibraryPathVariable)) {
    std::string_view rest = list;
    while (!rest.empty()) {
      const size_t end = rest.find(kPathListSeparator);
      std::string_view item = rest.substr(0, end);
      // PATH entries may be quoted ("C:\Program Files\…") to hide a ';'.
      if (item.size() >= 2 && item.front() == '"' && item.back() == '"')
        item = item.substr(1, item.size() - 2);
      if (!item.empty()) search.variable_dirs.push_back(path_of_utf8(item));
      if (end == std::string_view::npos) break;
      rest.remove_prefix(end + 1);
    }
  }
  return search;
}

bool is_library_name_of_this_os(std::string_view filename) {
  if (filename.size() < 4) return false;
  std::string extension(filename.substr(filename.size() - 4));
  for (char& c : extension) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return extension == ".dll";
}

}  // namespace archfit::sys
