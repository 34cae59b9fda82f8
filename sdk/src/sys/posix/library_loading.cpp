#include "sys/library_loading.hpp"

#include <dlfcn.h>
#include <link.h>

namespace archfit::sys {

namespace fs = std::filesystem;

// RTLD_NOLOAD|RTLD_NODELETE on a copy already loaded makes it permanent, so
// the shared_library's dlclose is harmless.
void keep_loaded(const fs::path& location) {
  ::dlopen(location.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD | RTLD_NODELETE);
}

fs::path loaded_library_file(const std::string& name) {
  void* handle = ::dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (!handle) return {};
  fs::path path;
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) path = map->l_name;
  ::dlclose(handle);
  return path;
}

std::string load_failure_message(const fs::path& library, const std::string& fallback) {
  ::dlerror();
  if (void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(handle);
    return fallback;
  }
  const char* message = ::dlerror();
  return message ? message : fallback;
}

}  // namespace archfit::sys
