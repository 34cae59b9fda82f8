#pragma once
// Scans files and directory trees on all cores.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "decompression_budget.hpp"
#include "scan_progress.hpp"
#include "scanner.hpp"
#include "sys/file_stamp.hpp"

namespace archfit::binary {

using FileStamp = sys::FileStamp;

// An earlier scan of exactly this version of a file (check/scan_index.hpp),
// or nullopt to read it: `stamp` and `real_path` (every link resolved) are
// what the walk found at `path`. Called from the scanning threads, for a
// different path each time.
using ReuseScan = std::function<std::optional<FileScan>(
    const std::string& path, const FileStamp& stamp, const std::string& real_path)>;

// What a directory held when a walk listed it: the names of the entries the
// walk keeps (never_device_code ones left out), in the order it visits them.
// Adding, removing or renaming an entry moves the directory's mtime and
// ctime, so the same stamp means the same names; each entry is still
// stat'ed, and each subdirectory's own listing checked, on every walk.
struct DirListing {
  std::string path;
  FileStamp stamp;  // of the directory
  std::vector<std::string> names;
};

// The names an earlier walk kept from exactly this version of a directory,
// or nullptr to list it. Called from the walking thread only.
using ReuseListing =
    std::function<const std::vector<std::string>*(const std::string& dir, const FileStamp& stamp)>;

// A path the walk did not follow, and why: a symbolic link to a directory
// outside the directory named, or a pseudo-filesystem mounted inside it.
struct SkippedPath {
  std::string path;
  std::string reason;  // "a symbolic link to /usr, outside /venv"
};

struct TreeScanOptions {
  ScanOptions scan;
  unsigned threads = 0;          // 0: one per hardware thread
  ProgressCallback on_progress;  // optional
  ReuseScan reuse;               // optional: files on disk only, not wheel members
  ReuseListing reuse_listing;    // optional
  // How much each named wheel's members may decompress to, in all.
  ArchiveLimits archive_limits;
};

struct TreeScan {
  // In the order of the paths given, each tree sorted; then the members of
  // each wheel named, as "wheel.whl!/member".
  std::vector<FileScan> files;
  // Of each file, the one actually read (or, reused, as the walk found it);
  // all zero for a wheel's members, for what could not be read and for a
  // second name of a file (a hard link), which is never kept apart.
  std::vector<FileStamp> stamps;
  // Of each file, where it really is, every link resolved, as the file read
  // says; "" where stamps are zero.
  std::vector<std::string> real_paths;
  uint64_t bytes = 0;     // total size of the files scanned, those not read left out
  size_t reused = 0;      // files whose earlier scan was reused, not read
  size_t hard_links = 0;  // files that are another name of a file read, judged under each
  // Every directory walked, as listed or as an earlier listing said.
  std::vector<DirListing> directories;
  size_t listings_reused = 0;        // directories not read, their listing reused
  int64_t started_ns = 0;            // the wall-clock time the walk began
  std::vector<SkippedPath> skipped;  // in the order met
};

// The regular files under `paths`: files as given, directories walked
// recursively, each directory and each file read once (by device and
// inode), so symlink loops and aliases such as libcublas.so ->
// libcublas.so.13 do not repeat work. A file with a second name that is not
// a symbolic link (a hard link: uv links installs from its cache, and a
// package may hold a hard-linked copy of another's library) is read once and
// judged under every such name: each name may belong to another package, and
// the one met first must not hide the other's owner. A path that does not exist or cannot
// be read becomes a FileScan with a problem, and so does one inside the tree
// the OS will not stat for any reason but its being gone (a path longer than
// PATH_MAX, 4,096 bytes on Linux: reported, never passed over). A wheel named as a path is an
// archive to open; one met inside a tree is just a file (a pip cache is not
// what the environment runs). Inside a tree, files whose names say they never
// hold device code (never_device_code) are passed over, and so are FIFOs,
// sockets and devices.
//
// A walk never leaves the directory it was given (issue 24):
// - A symbolic link to a directory is followed only when the directory it
//   resolves to lies inside the one named; one that leads out (to /, to
//   another user's home) is listed in `skipped`. Scanning that directory
//   means naming it.
// - A symbolic link to a file is followed wherever it leads: that file is
//   what the environment loads. Debian's python3-torch, for one, ships
//   torch/lib/libc10.so as a link to /usr/lib/x86_64-linux-gnu/libc10.so.1.13.
//   Reading a regular file is harmless; walking out of the tree is not.
// - Pseudo-filesystems (/proc, /sys, cgroups; sys/pseudo_filesystem.hpp) are not
//   walked: named, they are a problem; mounted inside the tree, skipped.
// Another name of a file already listed, and the index of that file in
// FileList::files.
struct HardLink {
  std::string path;
  size_t same_as = 0;
};
struct FileList {
  std::vector<std::filesystem::path> files;
  std::vector<FileStamp> stamps;        // of each file, from the walk's own stat
  std::vector<std::string> real_paths;  // of each file, every link resolved
  std::vector<HardLink> hard_links;
  std::vector<std::filesystem::path> wheels;
  std::vector<FileScan> unreadable;
  std::vector<DirListing> directories;  // in the order walked
  size_t listings_reused = 0;
  int64_t started_ns = 0;  // CLOCK_REALTIME when the walk began
  std::vector<SkippedPath> skipped;
};
// `on_progress`, if given, hears of each directory listed (ScanProgress with
// `walking` set).
FileList list_files(const std::vector<std::filesystem::path>& paths,
                    const ReuseListing& reuse_listing = {},
                    const ProgressCallback& on_progress = {});

TreeScan scan_tree(const std::vector<std::filesystem::path>& paths,
                   const TreeScanOptions& options = {});

}  // namespace archfit::binary
