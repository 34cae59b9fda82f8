#pragma once
// What the NVRTC path needs to know of an NVRTC before it compiles — version,
// build, the archs it targets, how to describe it — kept in the kernel cache
// as a discovery record, so that a process whose image is already cached
// never lists the loader's directories, reads libnvrtc or loads it.
// Records live in their own cache beside the images (<cache dir>/records),
// so that `archfit cache list` and the image budget see images only.
//
// A fresh process finding its module in the cache costs a stat of each
// searched directory, two verified cache reads and a hash; the discovery and
// dlopen it replaces cost about 15 ms (docs/op-author-guide.md, "The kernel
// cache"). The record is keyed by the search and the identity of every
// directory searched, and holds the identity of the library it describes:
// a copy installed, removed or replaced anywhere in the search, or the
// library overwritten in place, makes it stale, and it is rebuilt.
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "jit/cache/kernel_cache.hpp"
#include "nvrtc.hpp"

namespace archfit::jit {

struct NvrtcFacts {
  std::filesystem::path path;  // NvrtcInfo::path
  std::string origin;          // NvrtcInfo::origin
  NvrtcVersion version;        // nvrtcVersion
  std::string build;           // Nvrtc::build(): "13.0.88"
  std::string build_source;    // Nvrtc::build_source()
  std::vector<int> supported_archs;
  std::string description;  // Nvrtc::describe()
};

NvrtcFacts facts_of(const Nvrtc& nvrtc);

// The cache the discovery records of `images` live in: <its directory>/records,
// or memory only when it has no directory.
KernelCache::Options record_cache_options(const KernelCache& images);
// The same library, version and build: what a cache key depends on.
bool same_compiler(const NvrtcFacts& a, const NvrtcFacts& b);

// The NVRTC that loaded is not the one the discovery record described (it
// changed in a way the record could not see); the record is replaced, and
// whoever planned or keyed a compile on the old facts does it again.
class StaleNvrtcFacts : public NvrtcError {
 public:
  using NvrtcError::NvrtcError;
};

// A process's NVRTC, known by its facts first and loaded only when a compile
// needs it. Thread-safe.
class LazyNvrtc {
 public:
  // `discover`: what loads the NVRTC the search finds (Nvrtc::discover by
  // default; tests give their own). Nothing is read until facts() or
  // loaded() is called.
  explicit LazyNvrtc(NvrtcSearch search,
                     std::function<Nvrtc(const NvrtcSearch&)> discover = &Nvrtc::discover);

  // From the discovery record beside `images` when it is valid; else by
  // loading NVRTC and recording its facts there. Answered from memory after
  // the first call. Throws what discover throws (no NVRTC found).
  NvrtcFacts facts(const KernelCache& images);
  // The NVRTC itself, loaded on the first call. Throws StaleNvrtcFacts when
  // facts() had answered from a record that turns out not to describe it;
  // the record is replaced and facts() answers for the loaded one.
  const Nvrtc& loaded(const KernelCache& images);
  // Whether facts() came from the record without loading NVRTC.
  bool facts_from_record();
  // Whether NVRTC has been loaded (a miss compiled, or no record answered).
  bool is_loaded();

 private:
  std::string record_key() const;
  // Replaces the record under `key` (record_key(), which stats every
  // searched directory: computed once per caller) with `facts`.
  void record(KernelCache& records, const std::string& key, const NvrtcFacts& facts);
  const Nvrtc& load_locked();

  NvrtcSearch search_;
  std::function<Nvrtc(const NvrtcSearch&)> discover_;
  std::mutex mutex_;
  std::optional<NvrtcFacts> facts_;
  bool from_record_ = false;
  std::optional<Nvrtc> nvrtc_;
};

}  // namespace archfit::jit
