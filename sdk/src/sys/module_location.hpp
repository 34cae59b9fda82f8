#pragma once
// Where the running archfit code lives on disk: libarchfit.so, or the
// executable archfit_core is linked into. Installed data (the knowledge
// base, plugins) is found relative to it.
#include <filesystem>

namespace archfit::sys {

// The directory of that file; empty when it cannot be told.
std::filesystem::path running_module_dir();

}  // namespace archfit::sys
