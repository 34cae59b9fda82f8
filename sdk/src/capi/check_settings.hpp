#pragma once
// archfit_check_options read into the check's own options: shared by
// archfit_check_run and archfit_diagnose_run (which may run a check first).
#include <filesystem>

#include "archfit/archfit.h"
#include "check/check.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "jit/cache/cache_location.hpp"
#include "string_list.hpp"

namespace archfit::capi {

inline std::vector<std::filesystem::path> path_list(const char* const* items, size_t count,
                                                    const char* name) {
  const auto strings = string_list(items, count, name);
  return {strings.begin(), strings.end()};
}

// `given` must not be NULL; `name` names it in messages.
inline check::CheckOptions check_settings(const archfit_check_options* given, const char* name) {
  const auto options = read_options(given, name);
  check::CheckOptions settings;
  if (options.gpu) settings.gpus = {options.gpu};
  if (options.driver) settings.driver = options.driver;
  settings.site_packages =
      path_list(options.site_packages, options.site_packages_count, "site_packages");
  if (options.custom_nodes) settings.custom_nodes = std::filesystem::path(options.custom_nodes);
  settings.paths = path_list(options.paths, options.paths_count, "paths");
  settings.wheels = path_list(options.wheels, options.wheels_count, "wheels");
  settings.confirm = options.confirm != 0;
  if (options.plugins != 0) settings.plugins.emplace();
  if (options.kb_dir) settings.kb_dir = std::filesystem::path(options.kb_dir);
  if (options.scan_index != 0) {
    std::string why;  // no cache directory: the check reads every file, as without one
    settings.scan_index_dir = jit::cache_dir_from_environment(why);
  }
  // The context's threads and libcuda are the Session's to apply.
  return settings;
}

}  // namespace archfit::capi
