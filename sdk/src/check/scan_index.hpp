#pragma once
// What earlier checks of one environment found in its files, kept in the
// user cache so that checking an unchanged environment again reads no
// library: ComfyUI's Pre-flight node runs before every queued prompt.
//
// One index per set of checked roots, stored as one entry of a verified disk
// store (jit/cache/disk_store.hpp: owner-only directory, written through a
// temporary file and rename, checksummed on every read) under
// <cache dir>/scan-index, a folder that must pass the cache's own trust rule
// (owned by this user, writable by no one else). A file's earlier scan is
// kept under the file actually opened and read (its FileStamp: size, mtime,
// ctime, device, inode; and its real path), never under what the walk's
// stat saw before a link was flipped, and is reused only when its path,
// real path and stamp are what they were, and
// only by the same archfit build: the key covers the size, mtime and inode of
// the library that holds the scanner, so an upgrade rescans. Anything wrong
// with an index (unreadable, corrupt, another format) means an empty one,
// never an error: the check then reads every file, as without an index.
//
// Directories are kept the same way (binary::DirListing): an unchanged one
// is not listed again. A file or directory whose ctime is less than
// kRecentChangeNs before the walk began is not kept: a change made while it
// was read, in the same tick of the file system's clock, would leave its
// stamp as it was (git's "racily clean" entries), so it is read again next time.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "binary/tree_scan.hpp"

namespace archfit::check {

// The bytes kept for all the indexes together; the least recently used go first.
inline constexpr uint64_t kScanIndexBudgetBytes = 256ull << 20;
// Longer than a local file system's timestamp tick (a jiffy, at most 10 ms).
inline constexpr int64_t kRecentChangeNs = 100'000'000;

class ScanIndex {
 public:
  // The index kept in `cache_dir` for these roots; empty (with why in
  // problem()) when there is none yet or it cannot be used.
  static ScanIndex open(const std::filesystem::path& cache_dir,
                        const std::vector<std::filesystem::path>& roots);

  // The earlier scan of `path` as it is now, moved out of the index; nullopt
  // when the file is new or changed (or was unreadable then), or was taken.
  // Safe to call from several threads at once for different paths: it
  // changes only the entry it finds.
  std::optional<binary::FileScan> take(const std::string& path, const binary::FileStamp& stamp,
                                       const std::string& real_path);

  // The names an earlier walk kept from this directory as it is now, or
  // nullptr; valid while the index lives. For the walking thread alone.
  const std::vector<std::string>* listing(const std::string& dir, const binary::FileStamp& stamp);

  // Replaces the kept index with these files (TreeScan::files and stamps):
  // files gone since are dropped. "" or why it could not be written.
  std::string save(const binary::TreeScan& scan) const;

  // Whether the index already holds exactly what save(scan) would write:
  // every file and listing in it was reused and nothing else is in it.
  bool describes(const binary::TreeScan& scan) const;

  size_t size() const { return entries_.size(); }  // files
  size_t directories() const { return listings_.size(); }
  const std::string& problem() const { return problem_; }

  // The index as bytes and back (exposed for tests): an LZ4-compressed
  // MessagePack document and the files' packed images. from_bytes throws std::runtime_error naming
  // what is wrong.
  static std::vector<std::byte> to_bytes(const binary::TreeScan& scan);
  static ScanIndex from_bytes(std::span<const std::byte> bytes);

 private:
  struct Entry {
    binary::FileStamp stamp;
    std::string real_path;
    binary::FileScan scan;
    bool taken = false;
  };
  struct Listing {
    binary::FileStamp stamp;
    std::vector<std::string> names;
    bool used = false;
  };
  std::filesystem::path store_root_;
  std::string key_;
  bool writable_ = false;
  std::unordered_map<std::string, Entry> entries_;
  std::unordered_map<std::string, Listing> listings_;
  std::string problem_;
};

}  // namespace archfit::check
