#pragma once
// The JIT kernel cache (docs/design.md, decision 6; docs/op-author-guide.md, "The
// kernel cache"): compiled images by key, in process memory and on disk.
//
//   KernelCache& cache = runtime.cache();  // its owner's (jit/jit_runtime.hpp)
//   const std::string key = cache_key({nvrtc_version, nvrtc_build, "sm_120", options,
//                                      "rmsnorm.cu", source, headers});
//   CacheResult result = cache.get_or_build(key, [&] { return compile_with_nvrtc(); });
//
// get_or_build looks in this process's memory, then the primary directory,
// then each read-only directory, and only then builds: under the key's flock,
// so that of many processes and threads asking at once exactly one builds.
// Every entry read from disk is verified (entry_format.hpp); a bad one is
// discarded with a warning and rebuilt. A KernelCache may be used from many
// threads at once.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "jit/cache/cache_key.hpp"
#include "store/disk_store.hpp"

namespace archfit::jit {

using KernelImage = std::shared_ptr<const std::vector<std::byte>>;

// Where a get_or_build answer came from: this process's memory, the primary
// directory, a read-only directory, or the builder just now.
enum class CacheSource { memory, primary, readonly, built };
const char* to_string(CacheSource source);

struct CacheResult {
  KernelImage image;
  CacheSource source = CacheSource::built;
  double milliseconds = 0;  // spent in get_or_build, the build included
};

struct CacheStats {
  std::optional<std::filesystem::path> directory;  // the primary; empty: memory only
  std::vector<std::filesystem::path> readonly_directories;
  uint64_t max_bytes = 0;
  uint64_t entries = 0, bytes = 0;                    // in the primary directory
  uint64_t readonly_entries = 0, readonly_bytes = 0;  // in the read-only directories
  uint64_t memory_entries = 0;                        // held by this KernelCache
  // What this KernelCache has answered so far.
  uint64_t memory_hits = 0, primary_hits = 0, readonly_hits = 0, builds = 0, discarded = 0;
};

class KernelCache {
 public:
  struct Options {
    // The primary directory: read, written, evicted. Empty: memory only.
    std::optional<std::filesystem::path> dir;
    // Searched after the primary, for prebuilt bundles: verified, never
    // written or evicted. Same layout as the primary (<dir>/v1/…).
    std::vector<std::filesystem::path> readonly_dirs;
    // The primary's byte budget; least recently used entries go beyond it.
    // An image bigger than the budget is kept in memory only.
    uint64_t max_bytes = 1ull << 30;
    // Problems met while reading the environment (session/environment_settings:
    // ARCHFIT_CACHE_DIR, _READONLY_DIRS, _MAX_BYTES); reported as warnings.
    std::vector<std::string> notes;
    // Receives every warning as it happens; default: "archfit: …" on stderr.
    std::function<void(const std::string&)> on_warning;
  };
  using Entry = store::CacheEntry;
  using Builder = std::function<std::vector<std::byte>()>;

  // Prepares the primary directory: creates it with mode 0700 if missing;
  // refuses one writable by group or others (or owned by another user), and
  // uses one it cannot write as read-only. Without a usable primary it caches
  // in memory only and says so in exactly one warning.
  explicit KernelCache(Options options);
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The image for `key` (store::is_valid_cache_key; std::invalid_argument if not),
  // from memory, disk, or `build`. If `build` throws, nothing is written, the
  // exception reaches every caller waiting for this key, and the next request
  // builds again. A thread that waited for another thread's load or build of
  // the same key gets its image with source memory.
  CacheResult get_or_build(const std::string& key, const Builder& build);
  // The verified entry for `key` on disk (primary, then read-only), without
  // building or remembering it; a bad primary entry is discarded with a warning.
  std::optional<std::vector<std::byte>> find(const std::string& key);

  // Forgets `key` in memory and removes its primary entry: for a record its
  // reader found stale. An image being built for it right now is kept.
  // False when there is no writable primary or a builder holds the key's lock.
  bool discard(const std::string& key);

  // Entries of the primary and read-only directories, oldest use first
  // within each directory; checked by header (list) or fully (verify).
  std::vector<Entry> list();
  // Like list, checking every payload; bad primary entries are removed.
  std::vector<Entry> verify();
  CacheStats stats();
  // Removes every primary entry (except those being built right now) and
  // what dead builds left behind, and forgets what is in memory. Returns
  // the number of entries removed.
  size_t clear();

  std::vector<std::string> warnings() const;
  std::optional<std::filesystem::path> directory() const;

 private:
  struct Slot {
    std::promise<KernelImage> promise;
    std::shared_future<KernelImage> future = promise.get_future().share();
  };
  std::pair<KernelImage, CacheSource> load_or_build(const std::string& key, const Builder& build);
  std::optional<std::vector<std::byte>> read_readonly(const std::string& key);
  // Takes the key's lock into `lock`, then reads the primary entry; a bad
  // one is discarded with a warning.
  std::optional<std::vector<std::byte>> read_primary_locked(const std::string& key,
                                                            std::optional<sys::FileLock>& lock);
  void warn(const std::string& message);

  Options options_;
  std::optional<store::DiskStore> primary_;
  // Set by the first failed write (a full disk, a file size limit, a file
  // system gone read-only): from then on images stay in memory, with one
  // warning, instead of failing, and warning, on every build.
  std::atomic<bool> writes_failed_{false};
  std::vector<store::DiskStore> readonly_;

  std::mutex memo_mutex_;
  std::unordered_map<std::string, std::shared_ptr<Slot>> memo_;

  mutable std::mutex warnings_mutex_;
  std::vector<std::string> warnings_;

  std::atomic<uint64_t> memory_hits_{0}, primary_hits_{0}, readonly_hits_{0}, builds_{0},
      discarded_{0};
};

}  // namespace archfit::jit
