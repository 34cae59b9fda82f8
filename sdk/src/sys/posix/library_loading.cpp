#include "sys/library_loading.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "sys/trust.hpp"
#include "sys/user_folders.hpp"

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

LoaderSearch loader_search() {
  LoaderSearch search;
  // As the loader does, a setuid process ignores LD_LIBRARY_PATH.
  if (const char* list = trusted_path_variable(kLibraryPathVariable)) {
    std::stringstream items(list);
    for (std::string item; std::getline(items, item, kPathListSeparator);) {
      if (!item.empty()) search.variable_dirs.emplace_back(item);
    }
  }
  std::error_code error;
  std::vector<fs::path> confs;
  for (fs::directory_iterator it("/etc/ld.so.conf.d", error), end; !error && it != end;
       it.increment(error)) {
    if (it->path().extension() == ".conf") confs.push_back(it->path());
  }
  std::sort(confs.begin(), confs.end());  // as ldconfig reads them
  for (const auto& conf_file : confs) {
    std::ifstream conf(conf_file);
    for (std::string line; std::getline(conf, line);) {
      if (line.starts_with("/")) search.system_dirs.emplace_back(line);
    }
  }
  for (const char* dir : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
                          "/usr/lib64", "/lib", "/usr/lib"}) {
    search.system_dirs.emplace_back(dir);
  }
  return search;
}

bool is_library_name_of_this_os(std::string_view filename) {
  return filename.ends_with(".so") || filename.find(".so.") != std::string_view::npos;
}

}  // namespace archfit::sys
