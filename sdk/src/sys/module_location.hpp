#pragma once
// Where the running archfit code lives on disk: libarchfit.so (archfit.dll),
// or the executable archfit_core is linked into. Installed data (the
// knowledge base, plugins) is found relative to it, and the scan index is
// keyed by it (a rebuilt archfit scans afresh).
#include <filesystem>

namespace archfit::sys {

// That file; empty when it cannot be told.
std::filesystem::path running_module_file();

// The directory of that file; empty when it cannot be told.
std::filesystem::path running_module_dir();

}  // namespace archfit::sys
