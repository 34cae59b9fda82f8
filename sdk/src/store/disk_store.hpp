#pragma once
// One kernel-cache directory on disk, laid out as
//
//   <root>/v1/<first two key characters>/<key>.bin         an entry (entry_format.hpp)
//   <root>/v1/<first two key characters>/<key>.lock        flock'ed while the entry is built
//   <root>/v1/<first two key characters>/<key>.<pid>.<n>.tmp   an entry being written
//
// v1 is kCacheFormat. An entry is written to its .tmp file and renamed, so a
// reader sees a whole entry or none; it is verified on every read all the same.
// A writable store (the primary directory) writes, touches and removes; a
// read-only one (a fleet bundle) only reads. Least recently used means the
// oldest mtime: an entry's mtime is set when it is written and on every read.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sys/file_lock.hpp"

namespace archfit::store {

struct CacheEntry {
  std::string key;
  std::filesystem::path path;
  uint64_t bytes = 0;                         // the whole file, header included
  std::filesystem::file_time_type last_used;  // its mtime
  bool readonly = false;                      // found in a read-only directory
  bool valid = true;
  std::string problem;  // why it is not valid
};

// How much of an entry to check: nothing but its name, its header against
// its name and size, or everything including the payload checksum.
enum class EntryCheck { none, header, full };

class DiskStore {
 public:
  // `holds`: what its entries are, for the reason a folder is refused
  // ("someone else could plant kernels there").
  DiskStore(std::filesystem::path root, bool writable, std::string_view holds = "kernels");

  const std::filesystem::path& root() const { return root_; }
  bool writable() const { return writable_; }
  std::filesystem::path entry_path(std::string_view key) const;

  struct Read {
    enum class Status { missing, ok, bad };
    Status status = Status::missing;
    std::vector<std::byte> payload;  // when ok
    std::string problem;             // when bad
  };
  // The fully verified payload of `key`'s entry. A hit in a writable store
  // becomes its most recently used entry.
  Read read(std::string_view key) const;

  // Takes `key`'s lock, waiting for another builder; empty with `error`
  // set when the lock cannot be taken at all.
  std::optional<sys::FileLock> lock(std::string_view key, std::string* error) const;
  // Publishes `key`'s entry through a temporary file and rename; "" on
  // success, else why it failed (nothing is left behind then).
  std::string write(std::string_view key, std::span<const std::byte> payload) const;
  // Removes `key`'s entry and lock file unless a builder holds its lock.
  bool remove(std::string_view key) const;
  // Removes `key`'s entry, found bad, under the lock the caller holds; not
  // through a folder that fails the trust rule, which may be another's.
  void discard(std::string_view key) const;

  // Every entry, checked as far as `check` says.
  std::vector<CacheEntry> entries(EntryCheck check) const;
  // Removes least recently used entries until they take at most `max_bytes`,
  // and what killed or failed builds left (temporary and lock files no one
  // holds). Entries whose lock is held are left alone. Returns entries removed.
  size_t evict(uint64_t max_bytes) const;

 private:
  struct Listing;
  Listing list(EntryCheck check) const;
  void remove_leftovers(const Listing& listing) const;
  std::filesystem::path subdir(std::string_view key) const;
  // Creates the key's subdirectory (and the levels above it), mode 0700; "" or why not.
  std::string make_subdir(std::string_view key) const;
  std::filesystem::path lock_path(std::string_view key) const;
  Read verify(const std::filesystem::path& path, std::string_view key, EntryCheck check,
              bool touch) const;

  // Why the root or a folder from it down to `inside` may not be trusted; "".
  std::string untrusted_from_root(const std::filesystem::path& inside) const;

  std::filesystem::path root_;
  std::filesystem::path entries_root_;  // root_/v1
  bool writable_;
  std::string holds_;
};

}  // namespace archfit::store
