#include "host_adapter_files.hpp"

#include <string>
#include <system_error>
#include <vector>

#include "archfit/archfit.h"
#include "kb/knowledge_base.hpp"
#include "session/environment_settings.hpp"
#include "sys/library_loading.hpp"
#include "sys/module_location.hpp"
#include "sys/run_program.hpp"
#include "sys/utf8_path.hpp"

#ifndef ARCHFIT_SOURCE_DIR
#define ARCHFIT_SOURCE_DIR ""
#endif
#ifndef ARCHFIT_LIBRARY_FILE
#define ARCHFIT_LIBRARY_FILE ""
#endif
#ifndef ARCHFIT_INSTALL_LIBDIR
#define ARCHFIT_INSTALL_LIBDIR "lib"
#endif

namespace archfit::cli {

namespace fs = std::filesystem;

namespace {

// The library the pack's binding loads: libarchfit.so.<major>, or on
// Windows archfit.dll (the binding picks the one for its platform).
std::string library_name() {
  return sys::is_library_name_of_this_os("archfit.dll")
             ? std::string("archfit.dll")
             : "libarchfit.so." + std::to_string(ARCHFIT_VERSION_MAJOR);
}

// <prefix>/bin/archfit: the command is linked whole, so the running module
// is the executable.
fs::path running_prefix() { return sys::running_module_file().parent_path().parent_path(); }

bool present(const fs::path& path) {
  std::error_code error;
  return !path.empty() && fs::exists(path, error);
}

// The first candidate holding `inside`; else throws, listing where it looked.
fs::path first(const char* what, const std::vector<fs::path>& candidates, const fs::path& inside) {
  std::string looked;
  for (const auto& candidate : candidates) {
    if (candidate.empty()) continue;
    if (present(candidate / inside)) return candidate;
    looked += "\n  " + sys::utf8_of(candidate / inside);
  }
  throw std::runtime_error(std::string("cannot find ") + what + "; looked for:" + looked);
}

}  // namespace

HostAdapterFiles find_host_adapter_files() {
  const fs::path prefix = running_prefix();
  const fs::path source = ARCHFIT_SOURCE_DIR;
  const fs::path share = prefix.empty() ? fs::path() : prefix / "share" / "archfit";
  HostAdapterFiles files;
  files.comfyui_pack =
      first("the ComfyUI node pack",
            {share / "comfyui", source.empty() ? source : source / "host_adapters" / "comfyui"},
            "__init__.py");
  // In a wheel the prefix is the binding's own folder: that one, whose
  // library and vendored libraries are known to work together.
  files.python_binding =
      first("the archfit Python binding",
            {prefix, share / "python" / "archfit",
             source.empty() ? source : source / "host_adapters" / "python" / "archfit"},
            "_library.py");
  const fs::path built = ARCHFIT_LIBRARY_FILE;
  // On Windows archfit.dll sits in bin\ beside archfit.exe, as DLLs do.
  const std::string library = library_name();
  const fs::path lib_dir = first("libarchfit",
                                 {prefix.empty() ? prefix : prefix / ARCHFIT_INSTALL_LIBDIR,
                                  prefix.empty() ? prefix : prefix / "lib",
                                  prefix.empty() ? prefix : prefix / "bin", built.parent_path()},
                                 library);
  files.library = lib_dir / library;
  // Plugins load only in this helper, found from the library as the library
  // finds it (plugin/probe_helper.hpp): beside it, or in ../libexec/archfit.
  const std::string probe = std::string("archfit-plugin-probe") + sys::kProgramSuffix;
  files.plugin_probe =
      first(
          "archfit-plugin-probe",
          {prefix.empty() ? prefix : prefix / ARCHFIT_INSTALL_LIBEXECDIR / "archfit",
           prefix.empty() ? prefix : prefix / "libexec" / "archfit", lib_dir, built.parent_path()},
          probe) /
      probe;
  files.kb = kb::resolve_kb_dir(std::nullopt, session::read_environment_settings().kb_dir);
  if (files.python_binding == prefix) {
    const fs::path libs =
        prefix.parent_path() / sys::path_of_utf8(sys::utf8_of(prefix.filename()) + ".libs");
    if (present(libs)) files.bundled_libraries = libs;
  }
  return files;
}

}  // namespace archfit::cli
