#pragma once
// Scans files and directory trees on all cores.
#include <filesystem>
#include <vector>

#include "scan_progress.hpp"
#include "scanner.hpp"

namespace archfit::binary {

struct TreeScanOptions {
  ScanOptions scan;
  unsigned threads = 0;          // 0: one per hardware thread
  ProgressCallback on_progress;  // optional
};

struct TreeScan {
  // In the order of the paths given, each tree sorted; then the members of
  // each wheel named, as "wheel.whl!/member".
  std::vector<FileScan> files;
  uint64_t bytes = 0;  // total size of the files scanned
};

// The regular files under `paths`: files as given, directories walked
// recursively through symlinks, each directory and each file visited once
// (by device and inode), so symlink loops and aliases such as
// libcublas.so -> libcublas.so.13 do not repeat work. A path that does not
// exist or cannot be read becomes a FileScan with a problem. A wheel named as
// a path is an archive to open; one met inside a tree is just a file (a pip
// cache is not what the environment runs).
struct FileList {
  std::vector<std::filesystem::path> files;
  std::vector<uint64_t> sizes;  // of each file, from the walk's own stat
  std::vector<std::filesystem::path> wheels;
  std::vector<FileScan> unreadable;
};
FileList list_files(const std::vector<std::filesystem::path>& paths);

TreeScan scan_tree(const std::vector<std::filesystem::path>& paths,
                   const TreeScanOptions& options = {});

}  // namespace archfit::binary
