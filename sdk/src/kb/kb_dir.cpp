// Finding the knowledge base on disk. The order is the one resolve_kb_dir
// documents; sdk/data/kb/README.md says the same for users.
#include <system_error>

#include "knowledge_base.hpp"
#include "sys/module_location.hpp"

#ifndef ARCHFIT_KB_SOURCE_DIR
#define ARCHFIT_KB_SOURCE_DIR ""
#endif
#ifndef ARCHFIT_KB_INSTALL_DIR
#define ARCHFIT_KB_INSTALL_DIR ""
#endif
#ifndef ARCHFIT_KB_DATADIR
#define ARCHFIT_KB_DATADIR "share"
#endif

namespace archfit::kb {
namespace {

namespace fs = std::filesystem;

bool has_kb(const fs::path& dir) {
  std::error_code error;
  return !dir.empty() && fs::is_regular_file(dir / "gpus.yaml", error);
}

}  // namespace

fs::path resolve_kb_dir(const std::optional<fs::path>& explicit_dir,
                        const std::optional<fs::path>& environment_dir) {
  if (explicit_dir) {
    if (!has_kb(*explicit_dir)) {
      throw KbError(explicit_dir->string() + ": not a knowledge-base directory (no gpus.yaml)");
    }
    return *explicit_dir;
  }
  if (environment_dir) {
    if (!has_kb(*environment_dir)) {
      throw KbError("ARCHFIT_KB_DIR=" + environment_dir->string() +
                    ": not a knowledge-base directory (no gpus.yaml)");
    }
    return *environment_dir;
  }
  // <prefix>/bin/archfit, <prefix>/lib/libarchfit.so and
  // <prefix>/lib/<multiarch>/libarchfit.so all find <prefix>/share/archfit/kb.
  const auto relative = fs::path(ARCHFIT_KB_DATADIR) / "archfit" / "kb";
  if (const auto module_dir = sys::running_module_dir(); !module_dir.empty()) {
    for (const auto& prefix : {module_dir.parent_path(), module_dir.parent_path().parent_path()}) {
      if (has_kb(prefix / relative)) return prefix / relative;
    }
  }
  if (has_kb(ARCHFIT_KB_SOURCE_DIR)) return ARCHFIT_KB_SOURCE_DIR;
  if (has_kb(ARCHFIT_KB_INSTALL_DIR)) return ARCHFIT_KB_INSTALL_DIR;
  throw KbError(
      "no knowledge base found: pass --kb DIR or set ARCHFIT_KB_DIR to a directory with gpus.yaml");
}

}  // namespace archfit::kb
