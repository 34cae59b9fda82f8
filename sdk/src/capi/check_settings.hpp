#pragma once
// archfit_check_options read into a check's request and run choices: shared by
// archfit_check_run and archfit_diagnose_run (which may run a check first).
#include <filesystem>

#include "archfit/archfit.h"
#include "check/check.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "session/session.hpp"
#include "string_list.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::capi {

// Every path the C ABI takes is UTF-8, as the Python binding encodes it; on
// Windows std::filesystem would read a plain string in the ANSI code page.
inline std::vector<std::filesystem::path> path_list(const char* const* items, size_t count,
                                                    const char* name) {
  std::vector<std::filesystem::path> paths;
  for (const auto& text : string_list(items, count, name)) paths.push_back(sys::path_of_utf8(text));
  return paths;
}

// What archfit_check_options asks, and how it asks the check to run.
struct CheckCall {
  check::CheckRequest request;
  session::RunChoices choices;
};

// `given` must not be NULL; `name` names it in messages.
inline CheckCall check_settings(const archfit_check_options* given, const char* name) {
  const auto options = read_options(given, name);
  CheckCall call;
  check::CheckRequest& request = call.request;
  if (options.gpu) request.gpus = {options.gpu};
  if (options.driver) request.driver = options.driver;
  request.site_packages =
      path_list(options.site_packages, options.site_packages_count, "site_packages");
  if (options.custom_nodes) request.custom_nodes = sys::path_of_utf8(options.custom_nodes);
  request.paths = path_list(options.paths, options.paths_count, "paths");
  request.wheels = path_list(options.wheels, options.wheels_count, "wheels");
  request.confirm = options.confirm != 0;
  if (options.plugins != 0) request.plugins.emplace();
  if (options.kb_dir) call.choices.kb_dir = sys::path_of_utf8(options.kb_dir);
  // The index lives in the cache folder; with none, every file is read.
  call.choices.scan_index = options.scan_index != 0;
  // The context's threads and libcuda, and the rest of the resources, are
  // the Session's to supply.
  return call;
}

}  // namespace archfit::capi
