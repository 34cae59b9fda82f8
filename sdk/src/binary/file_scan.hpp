#pragma once
// Scans one file on disk: maps it read-only and hands the bytes to scan_bytes.
#include <filesystem>
#include <string>

#include "scanner.hpp"
#include "sys/file_stamp.hpp"

namespace archfit::binary {

// Never throws for a bad file: a file that cannot be opened or mapped comes
// back with a problem that says why.
// `opened`, when given, gets the stamp and the real path of the file
// actually read (sys::MappedFile::stamp, real_path): all zero and "" when
// nothing was opened.
struct OpenedFile {
  sys::FileStamp stamp;
  std::string real_path;
};
FileScan scan_file(const std::filesystem::path& path, const ScanOptions& options = {},
                   OpenedFile* opened = nullptr);

}  // namespace archfit::binary
