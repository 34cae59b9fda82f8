#include "store/disk_store.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <system_error>

#include "store/entry_format.hpp"
#include "store/store_key.hpp"
#include "sys/file_io.hpp"
#include "sys/file_status.hpp"
#include "sys/trust.hpp"
#include "sys/user_folders.hpp"

namespace archfit::store {

namespace fs = std::filesystem;

namespace {

fs::file_time_type to_file_time(int64_t mtime_ns) {
  const auto since_epoch = std::chrono::nanoseconds(mtime_ns);
  return std::chrono::file_clock::from_sys(std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(since_epoch)));
}

// Removes a file if it is there; one already gone is what was wanted.
void remove_quietly(const fs::path& path) {
  std::error_code ignored;
  fs::remove(path, ignored);
}

}  // namespace

// What one walk of the directory found.
struct DiskStore::Listing {
  std::vector<CacheEntry> entries;
  std::vector<std::string> locks;                      // keys with a lock file
  std::map<std::string, std::vector<fs::path>> temps;  // key → its temporary files
};

DiskStore::DiskStore(fs::path root, bool writable, std::string_view holds)
    : root_(std::move(root)),
      entries_root_(root_ / std::string("v").append(std::to_string(kCacheFormat))),
      writable_(writable),
      holds_(holds) {}

std::string DiskStore::untrusted_from_root(const fs::path& inside) const {
  // The root too: the kernel cache's is the cache folder, checked already
  // when it was chosen, but the scan index's is a folder inside it that
  // someone else may have made first (issue 34: a scan-index/ at 0777 was
  // used silently). It may be a link (a cache moved to another disk); the
  // folders below it may not.
  if (auto why = sys::untrusted_because(root_, holds_); !why.empty())
    return root_.string() + ": " + why;
  return sys::untrusted_below(root_, inside, holds_);
}

fs::path DiskStore::subdir(std::string_view key) const {
  return entries_root_ / std::string(key.substr(0, 2));
}

std::string DiskStore::make_subdir(std::string_view key) const {
  // The root too: someone may have removed the whole cache while we run.
  for (const fs::path& dir : {root_, entries_root_, subdir(key)}) {
    if (auto problem = sys::create_private_directory(dir); !problem.empty()) return problem;
  }
  // One that was there already may be another's: nothing is written,
  // locked or removed through it.
  if (auto untrusted = untrusted_from_root(subdir(key)); !untrusted.empty())
    return "refusing to write there: " + untrusted;
  return "";
}

fs::path DiskStore::entry_path(std::string_view key) const {
  return subdir(key) / (std::string(key) + ".bin");
}

fs::path DiskStore::lock_path(std::string_view key) const {
  return subdir(key) / (std::string(key) + ".lock");
}

DiskStore::Read DiskStore::verify(const fs::path& path, std::string_view key, EntryCheck check,
                                  bool touch) const {
  Read read;
  auto bad = [&](std::string problem) {
    read.status = Read::Status::bad;
    read.problem = std::move(problem);
    return std::move(read);
  };
  // The folders above the entry too (issue 24): a shard made 0777, or
  // swapped for a link to another user's folder, is not read from.
  if (auto untrusted = untrusted_from_root(path.parent_path()); !untrusted.empty())
    return bad("not trusted: " + untrusted);
  // Not through a link: an entry is a file archfit wrote itself.
  const sys::NoFollowFile file = sys::NoFollowFile::open(path);
  switch (file.kind()) {
    case sys::NoFollowFile::Kind::opened:
      break;
    case sys::NoFollowFile::Kind::missing:
      return read;
    case sys::NoFollowFile::Kind::link:
      return bad("a symbolic link, not an entry");
    case sys::NoFollowFile::Kind::not_regular:
      return bad("not a regular file");
    case sys::NoFollowFile::Kind::failed:
      return bad(file.problem());
  }
  if (auto untrusted = sys::untrusted_because(path, file, holds_); !untrusted.empty())
    return bad("not trusted: " + untrusted);
  const uint64_t size = file.size();
  std::byte head[kEntryHeaderSize + kEntryMaxKeyLength];
  const size_t head_size = static_cast<size_t>(std::min<uint64_t>(size, sizeof head));
  std::string unreadable;
  if (!file.read_at({head, head_size}, 0, &unreadable)) return bad("unreadable: " + unreadable);
  EntryHeader header;
  if (auto problem = check_entry_header({head, head_size}, size, key, header); !problem.empty())
    return bad(std::move(problem));
  if (check == EntryCheck::full) {
    read.payload.resize(header.payload_size);
    if (!file.read_at(read.payload, header.payload_offset, &unreadable))
      return bad("unreadable: " + unreadable);
    if (entry_checksum(read.payload) != header.checksum) {
      read.payload.clear();
      return bad("checksum mismatch: the payload is corrupt");
    }
  }
  if (touch) file.touch();  // best effort: only LRU order depends on it
  read.status = Read::Status::ok;
  return read;
}

DiskStore::Read DiskStore::read(std::string_view key) const {
  return verify(entry_path(key), key, EntryCheck::full, writable_);
}

std::optional<sys::FileLock> DiskStore::lock(std::string_view key, std::string* error) const {
  if (auto problem = make_subdir(key); !problem.empty()) {
    *error = problem;
    return std::nullopt;
  }
  return sys::FileLock::take(lock_path(key), sys::FileLock::Wait::block, error);
}

std::string DiskStore::write(std::string_view key, std::span<const std::byte> payload) const {
  // A write past the process's file size limit raises SIGXFSZ, which kills
  // the host (a ComfyUI with unsaved work) unless it ignores the signal:
  // an entry that would cross the limit is not written at all.
  const uint64_t entry_bytes = kEntryHeaderSize + key.size() + payload.size();
  if (const auto limit = sys::file_size_limit(); limit && entry_bytes > *limit) {
    return "cannot write " + entry_path(key).string() + ": the entry's " +
           std::to_string(entry_bytes) + " bytes exceed this process's file size limit " +
           "(RLIMIT_FSIZE, " + std::to_string(*limit) + " bytes)";
  }
  if (auto problem = make_subdir(key); !problem.empty()) return problem;
  // <key>.<pid>.<n>.tmp, which list() knows as the key's temporary file.
  const fs::path temp = sys::unique_temporary_path(subdir(key), key);
  const auto header = entry_header(key, payload);
  // Created exclusively (O_EXCL), which only keeps two writers off one
  // temporary name; the lock is the flock.
  // No fsync: a power cut may leave a torn entry under the final name, and
  // the checksum refuses it on the next read.
  return sys::write_then_replace(temp, entry_path(key), {header, payload});
}

void DiskStore::discard(std::string_view key) const {
  if (!untrusted_from_root(subdir(key)).empty()) return;
  remove_quietly(entry_path(key));
}

bool DiskStore::remove(std::string_view key) const {
  if (!untrusted_from_root(subdir(key)).empty()) return false;
  auto lock = sys::FileLock::take(lock_path(key), sys::FileLock::Wait::no);
  if (!lock) return false;
  remove_quietly(entry_path(key));
  lock->remove_file();
  return true;
}

DiskStore::Listing DiskStore::list(EntryCheck check) const {
  Listing listing;
  std::error_code error;
  // A shard that fails the trust rule is not listed: its entries would be
  // served, touched or evicted through it.
  if (!untrusted_from_root(entries_root_).empty()) return listing;
  for (fs::directory_iterator sub(entries_root_, error), end; !error && sub != end;
       sub.increment(error)) {
    if (!untrusted_from_root(sub->path()).empty()) continue;
    std::error_code inner;
    for (fs::directory_iterator file(sub->path(), inner); !inner && file != end;
         file.increment(inner)) {
      const fs::path& path = file->path();
      const std::string name = path.filename().string();
      const std::string key = name.substr(0, name.find('.'));
      if (!is_valid_cache_key(key) || key.compare(0, 2, sub->path().filename().string()) != 0)
        continue;  // not ours: left alone
      const std::string rest = name.substr(key.size());
      if (rest == ".lock") {
        listing.locks.push_back(key);
      } else if (rest.size() > 4 && rest.ends_with(".tmp")) {
        listing.temps[key].push_back(path);
      } else if (rest == ".bin") {
        const auto status = sys::file_status(path, sys::Links::not_followed);
        if (!status) continue;  // removed meanwhile
        CacheEntry entry{
            key,  path, status->stamp.size, to_file_time(status->stamp.mtime_ns), !writable_,
            true, ""};
        if (check != EntryCheck::none) {
          auto read = verify(path, key, check, false);
          entry.valid = read.status == Read::Status::ok;
          entry.problem =
              read.status == Read::Status::missing ? "removed while listed" : read.problem;
        }
        listing.entries.push_back(std::move(entry));
      }
    }
  }
  std::sort(listing.entries.begin(), listing.entries.end(),
            [](const CacheEntry& a, const CacheEntry& b) { return a.key < b.key; });
  return listing;
}

std::vector<CacheEntry> DiskStore::entries(EntryCheck check) const { return list(check).entries; }

void DiskStore::remove_leftovers(const Listing& listing) const {
  std::vector<std::string> keys = listing.locks;
  for (const auto& [key, paths] : listing.temps) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (const auto& key : keys) {
    // Whoever writes a temporary file holds the key's lock; if we can take
    // it, every temporary file of the key is a dead build's.
    auto lock = sys::FileLock::take(lock_path(key), sys::FileLock::Wait::no);
    if (!lock) continue;
    if (auto temps = listing.temps.find(key); temps != listing.temps.end()) {
      for (const auto& temp : temps->second) remove_quietly(temp);
    }
    if (!sys::file_status(entry_path(key), sys::Links::not_followed)) lock->remove_file();
  }
}

size_t DiskStore::evict(uint64_t max_bytes) const {
  if (!writable_) return 0;
  Listing listing = list(EntryCheck::none);
  remove_leftovers(listing);
  uint64_t total = 0;
  for (const auto& entry : listing.entries) total += entry.bytes;
  std::sort(listing.entries.begin(), listing.entries.end(),
            [](const CacheEntry& a, const CacheEntry& b) {
              return a.last_used != b.last_used ? a.last_used < b.last_used : a.key < b.key;
            });
  size_t removed = 0;
  for (const auto& entry : listing.entries) {
    if (total <= max_bytes) break;
    if (remove(entry.key)) {
      total -= entry.bytes;
      ++removed;
    }
  }
  return removed;
}

}  // namespace archfit::store
