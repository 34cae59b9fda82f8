#pragma once
// Scans one file on disk: maps it read-only and hands the bytes to scan_bytes.
#include <filesystem>

#include "scanner.hpp"

namespace archfit::binary {

// Never throws for a bad file: a file that cannot be opened or mapped comes
// back with a problem that says why.
FileScan scan_file(const std::filesystem::path& path, const ScanOptions& options = {});

}  // namespace archfit::binary
