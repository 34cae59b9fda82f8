#include "jit/cache/kernel_cache.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

#include "store/entry_format.hpp"
#include "store/store_location.hpp"

namespace archfit::jit {

namespace fs = std::filesystem;

namespace {

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

void require_key(const std::string& key) {
  if (store::is_valid_cache_key(key)) return;
  const bool printable = key.size() <= 128 && std::all_of(key.begin(), key.end(), [](char c) {
                           return c >= 0x20 && c < 0x7f;
                         });
  throw std::invalid_argument(
      "not a kernel-cache key: " +
      (printable ? "\"" + key + "\"" : std::to_string(key.size()) + " bytes") +
      " (a key is 2 to 128 characters from [0-9a-z], as cache_key() makes)");
}

KernelImage share(std::vector<std::byte>&& payload) {
  return std::make_shared<const std::vector<std::byte>>(std::move(payload));
}

}  // namespace

const char* to_string(CacheSource source) {
  switch (source) {
    case CacheSource::memory:
      return "memory";
    case CacheSource::primary:
      return "primary";
    case CacheSource::readonly:
      return "readonly";
    case CacheSource::built:
      return "built";
  }
  return "unknown";
}

KernelCache::KernelCache(Options options) : options_(std::move(options)) {
  for (const auto& note : options_.notes) warn(note);
  if (options_.dir) {
    const auto verdict = store::open_primary_dir(*options_.dir);
    if (verdict.use == store::DirUse::read_write) {
      primary_.emplace(*options_.dir, true);
    } else {
      if (verdict.use == store::DirUse::read_only) readonly_.emplace_back(*options_.dir, false);
      warn("kernel cache: " + verdict.problem + "; " +
           (verdict.use == store::DirUse::read_only ? "entries there are still read, but " : "") +
           "new kernels are cached in memory only");
    }
  }
  for (const auto& dir : options_.readonly_dirs) {
    const auto verdict = store::open_readonly_dir(dir);
    if (verdict.use == store::DirUse::refused) {
      warn("kernel cache: " + verdict.problem + "; not used");
    } else {
      readonly_.emplace_back(dir, false);
    }
  }
}

CacheResult KernelCache::get_or_build(const std::string& key, const Builder& build) {
  const auto start = std::chrono::steady_clock::now();
  require_key(key);
  std::shared_ptr<Slot> slot;
  bool builder = false;
  {
    const std::lock_guard lock(memo_mutex_);
    auto [it, inserted] = memo_.try_emplace(key);
    if (inserted) {
      it->second = std::make_shared<Slot>();
      builder = true;
    }
    slot = it->second;
  }
  if (!builder) {
    KernelImage image =
        slot->future.get();  // waits for the thread loading it; rethrows its failure
    ++memory_hits_;
    return {std::move(image), CacheSource::memory, milliseconds_since(start)};
  }
  try {
    auto [image, source] = load_or_build(key, build);
    slot->promise.set_value(image);
    return {std::move(image), source, milliseconds_since(start)};
  } catch (...) {
    {
      const std::lock_guard lock(memo_mutex_);
      if (auto it = memo_.find(key); it != memo_.end() && it->second == slot) memo_.erase(it);
    }
    slot->promise.set_exception(std::current_exception());
    throw;
  }
}

std::optional<std::vector<std::byte>> KernelCache::read_readonly(const std::string& key) {
  for (const auto& store : readonly_) {
    auto read = store.read(key);
    if (read.status == store::DiskStore::Read::Status::ok) {
      ++readonly_hits_;
      return std::move(read.payload);
    }
    if (read.status == store::DiskStore::Read::Status::bad) {
      warn("kernel cache: ignoring " + store.entry_path(key).string() + ": " + read.problem +
           " (a read-only directory: left as it is)");
    }
  }
  return std::nullopt;
}

std::optional<std::vector<std::byte>> KernelCache::read_primary_locked(
    const std::string& key, std::optional<sys::FileLock>& lock) {
  std::string error;
  lock = primary_->lock(key, &error);
  if (!lock) {
    warn("kernel cache: " + error +
         "; going on without the lock, so another process may build the same kernel");
  }
  auto read = primary_->read(key);
  if (read.status == store::DiskStore::Read::Status::ok) {
    ++primary_hits_;
    return std::move(read.payload);
  }
  if (read.status == store::DiskStore::Read::Status::bad) {
    ++discarded_;
    const fs::path path = primary_->entry_path(key);
    primary_->discard(key);
    warn("kernel cache: discarded " + path.string() + ": " + read.problem + "; it will be rebuilt");
  }
  return std::nullopt;
}

std::pair<KernelImage, CacheSource> KernelCache::load_or_build(const std::string& key,
                                                               const Builder& build) {
  // Readers take no lock: entries appear whole, by rename, and are verified.
  if (primary_) {
    if (auto read = primary_->read(key); read.status == store::DiskStore::Read::Status::ok) {
      ++primary_hits_;
      return {share(std::move(read.payload)), CacheSource::primary};
    }
  }
  if (auto payload = read_readonly(key)) return {share(std::move(*payload)), CacheSource::readonly};
  if (!primary_) {
    auto payload = build();
    ++builds_;
    return {share(std::move(payload)), CacheSource::built};
  }
  // A miss: take the key's lock, and look again, for another process may
  // have built the entry while we waited.
  std::optional<sys::FileLock> lock;
  if (auto payload = read_primary_locked(key, lock))
    return {share(std::move(*payload)), CacheSource::primary};
  auto payload = build();
  ++builds_;
  const uint64_t bytes = store::kEntryHeaderSize + key.size() + payload.size();
  if (bytes > options_.max_bytes) {
    warn("kernel cache: an image of " + std::to_string(payload.size()) +
         " bytes does not fit the cache budget of " + std::to_string(options_.max_bytes) +
         " bytes (" + store::kCacheMaxBytesVariable + "); it is kept in memory only");
  } else if (writes_failed_) {
    // Memory only since a write failed (warned then).
  } else if (auto error = primary_->write(key, payload); !error.empty()) {
    writes_failed_ = true;
    warn("kernel cache: " + error +
         "; from now on this process keeps the images it builds in memory only");
  } else {
    primary_->evict(options_.max_bytes);
  }
  return {share(std::move(payload)), CacheSource::built};
}

std::optional<std::vector<std::byte>> KernelCache::find(const std::string& key) {
  require_key(key);
  if (primary_) {
    auto read = primary_->read(key);
    if (read.status == store::DiskStore::Read::Status::ok) {
      ++primary_hits_;
      return std::move(read.payload);
    }
    if (read.status == store::DiskStore::Read::Status::bad) {
      std::optional<sys::FileLock> lock;
      if (auto payload = read_primary_locked(key, lock)) return payload;
    }
  }
  return read_readonly(key);
}

std::vector<KernelCache::Entry> KernelCache::list() {
  std::vector<Entry> out;
  auto add = [&](const store::DiskStore& store) {
    auto entries = store.entries(store::EntryCheck::header);
    std::stable_sort(entries.begin(), entries.end(),
                     [](const Entry& a, const Entry& b) { return a.last_used < b.last_used; });
    out.insert(out.end(), entries.begin(), entries.end());
  };
  if (primary_) add(*primary_);
  for (const auto& store : readonly_) add(store);
  return out;
}

std::vector<KernelCache::Entry> KernelCache::verify() {
  std::vector<Entry> out;
  if (primary_) {
    for (auto& entry : primary_->entries(store::EntryCheck::full)) {
      if (!entry.valid && primary_->remove(entry.key)) {
        ++discarded_;
        entry.problem += "; removed";
      }
      out.push_back(std::move(entry));
    }
  }
  for (const auto& store : readonly_) {
    auto entries = store.entries(store::EntryCheck::full);
    out.insert(out.end(), entries.begin(), entries.end());
  }
  return out;
}

CacheStats KernelCache::stats() {
  CacheStats stats;
  stats.directory = directory();
  stats.max_bytes = options_.max_bytes;
  if (primary_) {
    for (const auto& entry : primary_->entries(store::EntryCheck::none)) {
      ++stats.entries;
      stats.bytes += entry.bytes;
    }
  }
  for (const auto& store : readonly_) {
    stats.readonly_directories.push_back(store.root());
    for (const auto& entry : store.entries(store::EntryCheck::none)) {
      ++stats.readonly_entries;
      stats.readonly_bytes += entry.bytes;
    }
  }
  {
    const std::lock_guard lock(memo_mutex_);
    stats.memory_entries = memo_.size();
  }
  stats.memory_hits = memory_hits_;
  stats.primary_hits = primary_hits_;
  stats.readonly_hits = readonly_hits_;
  stats.builds = builds_;
  stats.discarded = discarded_;
  return stats;
}

bool KernelCache::discard(const std::string& key) {
  require_key(key);
  {
    const std::lock_guard lock(memo_mutex_);
    if (auto it = memo_.find(key);
        it != memo_.end() &&
        it->second->future.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      memo_.erase(it);
  }
  return primary_ && primary_->writable() && primary_->remove(key);
}

size_t KernelCache::clear() {
  {
    const std::lock_guard lock(memo_mutex_);
    memo_.clear();
  }
  return primary_ ? primary_->evict(0) : 0;
}

std::vector<std::string> KernelCache::warnings() const {
  const std::lock_guard lock(warnings_mutex_);
  return warnings_;
}

std::optional<fs::path> KernelCache::directory() const {
  if (primary_) return primary_->root();
  return std::nullopt;
}

void KernelCache::warn(const std::string& message) {
  const std::lock_guard lock(warnings_mutex_);
  if (std::find(warnings_.begin(), warnings_.end(), message) != warnings_.end()) return;
  warnings_.push_back(message);
  if (options_.on_warning) {
    options_.on_warning(message);
  } else {
    std::fprintf(stderr, "archfit: %s\n", message.c_str());
  }
}

}  // namespace archfit::jit
