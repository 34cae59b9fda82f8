// The JIT kernel cache (sdk/src/jit/cache/): the key, the entry format, the
// directory rules, LRU eviction, and processes racing one directory.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "jit/cache/cache_key.hpp"
#include "jit/cache/kernel_cache.hpp"
#include "jit_cache_payload.hpp"
#include "saved_env.hpp"
#include "store/entry_format.hpp"
#include "store/store_location.hpp"

namespace {

namespace fs = std::filesystem;
using namespace archfit::jit;
namespace store = archfit::store;
using archfit::testing::jit_cache_payload;
using archfit::testing::SavedEnv;
using Bytes = std::vector<std::byte>;

// ---------------------------------------------------------------- the key

CacheKeyInput sample_input() {
  return {"13.0",
          "V13.0.88 CL-36424714",
          "sm_120",
          {"--std=c++17", "-frandom-seed=1", "-DBLOCK=256"},
          "rmsnorm.cu",
          "extern \"C\" __global__ void k() {}",
          {{"common.cuh", "#pragma once"}, {"math.cuh", "#define SQ(x) ((x)*(x))"}}};
}

TEST(CacheKey, IsThirtyTwoHexDigitsAndStable) {
  const std::string key = cache_key(sample_input());
  EXPECT_EQ(key.size(), 32u);
  EXPECT_TRUE(store::is_valid_cache_key(key));
  EXPECT_EQ(key, cache_key(sample_input()));
}

TEST(CacheKey, EachInputAloneChangesTheKey) {
  std::map<std::string, CacheKeyInput> variants;
  auto vary = [&](const std::string& name, auto change) {
    CacheKeyInput input = sample_input();
    change(input);
    variants.emplace(name, input);
  };
  vary("nvrtc version", [](auto& in) { in.nvrtc_version = "12.9"; });
  vary("nvrtc build", [](auto& in) { in.nvrtc_build = "V13.0.88 CL-36424715"; });
  vary("target suffix a", [](auto& in) { in.target = "sm_120a"; });
  vary("target suffix f", [](auto& in) { in.target = "sm_120f"; });
  vary("target ptx", [](auto& in) { in.target = "compute_120"; });
  vary("option value", [](auto& in) { in.options[2] = "-DBLOCK=128"; });
  vary("option added", [](auto& in) { in.options.push_back("-use_fast_math"); });
  vary("option removed", [](auto& in) { in.options.pop_back(); });
  vary("option order", [](auto& in) { std::swap(in.options[0], in.options[2]); });
  vary("options joined", [](auto& in) {
    in.options = {"--std=c++17 -frandom-seed=1", "-DBLOCK=256"};
  });
  vary("source name", [](auto& in) { in.source_name = "rmsnorm2.cu"; });
  vary("source", [](auto& in) { in.source += " "; });
  vary("name/source boundary", [](auto& in) {
    in.source_name += in.source.substr(0, 1);
    in.source.erase(0, 1);
  });
  vary("header content", [](auto& in) { in.headers[0].second = "#pragma  once"; });
  vary("header name", [](auto& in) { in.headers[0].first = "common.h"; });
  vary("header name/content swapped",
       [](auto& in) { std::swap(in.headers[0].first, in.headers[0].second); });
  vary("header added", [](auto& in) { in.headers.emplace_back("extra.cuh", ""); });
  vary("header removed", [](auto& in) { in.headers.pop_back(); });
  vary("empty header → no header", [](auto& in) { in.headers = {{"common.cuh", ""}}; });
  vary("no headers", [](auto& in) { in.headers.clear(); });
  std::map<std::string, std::string> seen{{cache_key(sample_input()), "the sample"}};
  for (const auto& [name, input] : variants) {
    const auto [it, fresh] = seen.emplace(cache_key(input), name);
    EXPECT_TRUE(fresh) << name << " gives the same key as " << it->second;
  }
}

TEST(CacheKey, OptionsAreTrimmedButKeepTheirOrder) {
  CacheKeyInput spaced = sample_input();
  spaced.options = {"  --std=c++17", "", "-frandom-seed=1\t", " ", "-DBLOCK=256\n"};
  EXPECT_EQ(cache_key(spaced), cache_key(sample_input()));
  EXPECT_EQ(canonical_options({" -DA ", "", "-DB"}), (std::vector<std::string>{"-DA", "-DB"}));
}

TEST(CacheKey, HeaderOrderDoesNotMatterButDuplicatesKeepTheirs) {
  CacheKeyInput reversed = sample_input();
  std::reverse(reversed.headers.begin(), reversed.headers.end());
  EXPECT_EQ(cache_key(reversed), cache_key(sample_input()));
  CacheKeyInput twice = sample_input(), twice_swapped = sample_input();
  twice.headers = {{"a.h", "1"}, {"a.h", "2"}};
  twice_swapped.headers = {{"a.h", "2"}, {"a.h", "1"}};
  EXPECT_NE(cache_key(twice), cache_key(twice_swapped));
}

TEST(CacheKey, OnlySafeFileNamesAreKeys) {
  for (const char* bad : {"", "a", "../etc/passwd", "ABCDEF", "ab cd", "ab.bin", "ab/cd"})
    EXPECT_FALSE(store::is_valid_cache_key(bad)) << bad;
  EXPECT_FALSE(store::is_valid_cache_key(std::string(129, 'a')));
  EXPECT_TRUE(store::is_valid_cache_key(std::string(128, 'a')));
}

// ---------------------------------------------------------------- the entry format

TEST(EntryFormat, GarbageAndMutationsAreRefusedWithoutCrashing) {
  const std::string key = cache_key(sample_input());
  const Bytes payload = jit_cache_payload(key, 100);
  Bytes file = store::entry_header(key, payload);
  file.insert(file.end(), payload.begin(), payload.end());
  store::EntryHeader header;
  ASSERT_EQ(store::check_entry_header(file, file.size(), key, header), "");
  EXPECT_EQ(header.payload_offset, store::kEntryHeaderSize + key.size());
  EXPECT_EQ(header.payload_size, payload.size());
  EXPECT_EQ(header.checksum, store::entry_checksum(payload));

  // Every single-byte change in the header or key is refused or caught by the checksum.
  for (size_t i = 0; i < header.payload_offset; ++i) {
    Bytes bad = file;
    bad[i] ^= std::byte{0x01};
    store::EntryHeader out;
    const std::string problem = store::check_entry_header(bad, bad.size(), key, out);
    EXPECT_TRUE(!problem.empty() || out.checksum != store::entry_checksum(payload)) << "byte " << i;
  }
  // Random bytes of random lengths.
  std::mt19937_64 random(42);
  for (int round = 0; round < 20000; ++round) {
    Bytes junk(random() % 200);
    for (auto& byte : junk) byte = static_cast<std::byte>(random());
    if (round % 2 == 0 && junk.size() >= 8) std::memcpy(junk.data(), "ARCHFITK", 8);
    store::EntryHeader out;
    EXPECT_NE(store::check_entry_header(junk, random() % 1000, key, out), "");
  }
}

// ---------------------------------------------------------------- a cache in a temporary directory

fs::path make_temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "archfit-cache-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

mode_t mode_of(const fs::path& path) {
  struct stat info {};
  ::stat(path.c_str(), &info);
  return info.st_mode & 07777;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool contains(const std::vector<std::string>& warnings, const std::string& part) {
  return std::any_of(warnings.begin(), warnings.end(),
                     [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

class JitCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = make_temp_dir();
    dir_ = root_ / "cache";
  }
  void TearDown() override {
    std::error_code ignored;
    for (const auto& path : fs::recursive_directory_iterator(root_, ignored))
      ::chmod(path.path().c_str(), 0700);
    fs::remove_all(root_, ignored);
  }

  KernelCache::Options options(std::optional<fs::path> dir, uint64_t max_bytes = 1ull << 30) {
    KernelCache::Options options;
    options.dir = std::move(dir);
    options.max_bytes = max_bytes;
    options.on_warning = [](const std::string&) {};  // kept in warnings(), not printed
    return options;
  }
  KernelCache::Options options() { return options(dir_); }

  // A builder that counts its calls and returns the key's payload.
  KernelCache::Builder builder(const std::string& key, size_t size = 4096) {
    return [this, key, size] {
      ++builds_;
      return jit_cache_payload(key, size);
    };
  }
  static std::string key(const std::string& name) {
    CacheKeyInput input = sample_input();
    input.source_name = name;
    return cache_key(input);
  }
  fs::path entry_path(const fs::path& dir, const std::string& key) const {
    return dir / "v1" / key.substr(0, 2) / (key + ".bin");
  }
  fs::path entry_path(const std::string& key) const { return entry_path(dir_, key); }

  fs::path root_, dir_;
  std::atomic<int> builds_{0};
};

TEST_F(JitCacheTest, MissThenHitInMemoryThenOnDisk) {
  const std::string k = key("a.cu");
  {
    KernelCache cache(options());
    const auto first = cache.get_or_build(k, builder(k));
    EXPECT_EQ(first.source, CacheSource::built);
    EXPECT_EQ(*first.image, jit_cache_payload(k));
    const auto second = cache.get_or_build(k, builder(k));
    EXPECT_EQ(second.source, CacheSource::memory);
    EXPECT_EQ(second.image, first.image);  // the same bytes, not a copy
    EXPECT_TRUE(cache.warnings().empty()) << joined(cache.warnings());
  }
  KernelCache fresh(options());  // as a new process would
  const auto third = fresh.get_or_build(k, builder(k));
  EXPECT_EQ(third.source, CacheSource::primary);
  EXPECT_EQ(*third.image, jit_cache_payload(k));
  EXPECT_EQ(builds_, 1);
  EXPECT_EQ(fresh.find(k), jit_cache_payload(k));
  EXPECT_EQ(fresh.find(key("other.cu")), std::nullopt);
  const auto stats = fresh.stats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.bytes, store::kEntryHeaderSize + k.size() + 4096);
  EXPECT_EQ(stats.primary_hits, 2u);
  EXPECT_EQ(stats.builds, 0u);
  EXPECT_EQ(mode_of(entry_path(k)), 0600u);
}

TEST_F(JitCacheTest, DiscardForgetsTheKeyInMemoryAndOnDisk) {
  const std::string k = key("a.cu");
  const std::string other = key("b.cu");
  KernelCache cache(options());
  cache.get_or_build(k, builder(k));
  cache.get_or_build(other, builder(other));
  EXPECT_TRUE(cache.discard(k));
  EXPECT_FALSE(fs::exists(entry_path(k)));
  EXPECT_EQ(cache.find(k), std::nullopt);
  EXPECT_EQ(cache.get_or_build(k, builder(k)).source, CacheSource::built);  // not from memory
  EXPECT_EQ(cache.get_or_build(other, builder(other)).source, CacheSource::memory);
  EXPECT_EQ(builds_, 3);
  KernelCache memory_only(KernelCache::Options{});
  EXPECT_FALSE(memory_only.discard(k));
}

TEST_F(JitCacheTest, ThreadsAskingAtOnceBuildOnce) {
  for (const auto& dir : {std::optional<fs::path>(dir_), std::optional<fs::path>()}) {
    builds_ = 0;
    KernelCache cache(options(dir));
    const std::string k = key("a.cu");
    std::vector<std::future<CacheResult>> results;
    for (int t = 0; t < 16; ++t) {
      results.push_back(std::async(std::launch::async, [&] {
        return cache.get_or_build(k, [&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          return builder(k)();
        });
      }));
    }
    for (auto& result : results) EXPECT_EQ(*result.get().image, jit_cache_payload(k));
    EXPECT_EQ(builds_, 1) << (dir ? "on disk" : "in memory");
  }
}

// Builders of one key never overlap, even while another thread keeps
// removing entries and lock files (a lock file removed under a waiting
// builder must not let a second builder in).
TEST_F(JitCacheTest, BuildersNeverOverlapWhileEntriesAreCleared) {
  const std::string k = key("a.cu");
  std::atomic<int> active{0}, overlaps{0}, wrong{0};
  std::atomic<bool> stop{false};
  std::thread clearer([&] {
    KernelCache cache(options());
    while (!stop) cache.clear();
  });
  std::vector<std::thread> askers;
  for (int t = 0; t < 6; ++t) {
    askers.emplace_back([&] {
      for (int round = 0; round < 200; ++round) {
        KernelCache cache(options());  // a cold memory each time: every request goes to disk
        const auto result = cache.get_or_build(k, [&] {
          if (++active > 1) ++overlaps;
          std::this_thread::sleep_for(std::chrono::microseconds(500));
          --active;
          return jit_cache_payload(k);
        });
        if (*result.image != jit_cache_payload(k)) ++wrong;
      }
    });
  }
  for (auto& asker : askers) asker.join();
  stop = true;
  clearer.join();
  EXPECT_EQ(overlaps, 0);
  EXPECT_EQ(wrong, 0);
}

TEST_F(JitCacheTest, FailedBuildWritesNothingAndIsRetried) {
  KernelCache cache(options());
  const std::string k = key("a.cu");
  EXPECT_THROW(cache.get_or_build(k, []() -> Bytes { throw std::runtime_error("nvrtc said no"); }),
               std::runtime_error);
  EXPECT_FALSE(fs::exists(entry_path(k)));
  EXPECT_EQ(cache.find(k), std::nullopt);
  EXPECT_EQ(cache.get_or_build(k, builder(k)).source, CacheSource::built);
  EXPECT_TRUE(fs::exists(entry_path(k)));
}

TEST_F(JitCacheTest, InvalidKeysAreRefused) {
  KernelCache cache(options());
  for (const std::string& bad : std::vector<std::string>{"", "../../x", "Z0", std::string(300, 'a'),
                                                         std::string("a\0b", 3)}) {
    EXPECT_THROW(cache.get_or_build(bad, builder("x")), std::invalid_argument);
    EXPECT_THROW(cache.find(bad), std::invalid_argument);
  }
  EXPECT_EQ(builds_, 0);
}

// Flips every bit of the byte at `offset` (from the end when negative).
void flip_byte(const fs::path& path, std::streamoff offset) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  const auto from = offset < 0 ? std::ios::end : std::ios::beg;
  file.seekg(offset, from);
  const char byte = static_cast<char>(file.get());
  file.seekp(offset, from);
  file.put(static_cast<char>(~byte));
}

// After an entry was damaged: a new cache discards it with a warning naming
// `problem`, rebuilds it, and leaves a sound entry behind.
void expect_discarded_and_rebuilt(const std::string& k, const KernelCache::Options& options,
                                  const std::string& problem) {
  KernelCache cache(options);
  int builds = 0;
  const auto result = cache.get_or_build(k, [&] {
    ++builds;
    return jit_cache_payload(k);
  });
  EXPECT_EQ(result.source, CacheSource::built);
  EXPECT_EQ(*result.image, jit_cache_payload(k));
  EXPECT_EQ(builds, 1);
  EXPECT_TRUE(contains(cache.warnings(), "discarded")) << joined(cache.warnings());
  EXPECT_TRUE(contains(cache.warnings(), problem)) << joined(cache.warnings());
  EXPECT_EQ(cache.stats().discarded, 1u);
  KernelCache again(options);
  EXPECT_EQ(again.get_or_build(k, [] { return Bytes{}; }).source, CacheSource::primary);
}

TEST_F(JitCacheTest, CorruptedPayloadByteIsDiscardedAndRebuilt) {
  const std::string k = key("a.cu");
  KernelCache(options()).get_or_build(k, builder(k));
  flip_byte(entry_path(k), -100);
  expect_discarded_and_rebuilt(k, options(), "checksum mismatch");
}

TEST_F(JitCacheTest, CorruptedHeaderByteIsDiscardedAndRebuilt) {
  const std::string k = key("a.cu");
  KernelCache(options()).get_or_build(k, builder(k));
  flip_byte(entry_path(k), 17);  // inside the payload size
  expect_discarded_and_rebuilt(k, options(), "truncated");
}

TEST_F(JitCacheTest, TruncatedEntryIsDiscardedAndRebuilt) {
  const std::string k = key("a.cu");
  KernelCache(options()).get_or_build(k, builder(k));
  fs::resize_file(entry_path(k), fs::file_size(entry_path(k)) - 1000);
  expect_discarded_and_rebuilt(k, options(), "truncated");
  fs::resize_file(entry_path(k), 10);  // shorter than a header
  expect_discarded_and_rebuilt(k, options(), "truncated");
}

TEST_F(JitCacheTest, EntryOfAnotherKeyIsDiscardedAndRebuilt) {
  const std::string a = key("a.cu"), b = key("b.cu");
  KernelCache(options()).get_or_build(a, builder(a));
  fs::create_directories(entry_path(b).parent_path());
  fs::copy_file(entry_path(a), entry_path(b));
  expect_discarded_and_rebuilt(b, options(), "holds the entry for key " + a);
}

TEST_F(JitCacheTest, FindDiscardsABadEntry) {
  const std::string k = key("a.cu");
  KernelCache(options()).get_or_build(k, builder(k));
  fs::resize_file(entry_path(k), 40);
  KernelCache cache(options());
  EXPECT_EQ(cache.find(k), std::nullopt);
  EXPECT_TRUE(contains(cache.warnings(), "discarded")) << joined(cache.warnings());
  EXPECT_FALSE(fs::exists(entry_path(k)));
}

TEST_F(JitCacheTest, MissingDirectoryIsCreatedOwnerOnly) {
  const fs::path deep = root_ / "a" / "b" / "archfit";
  const mode_t old_umask = ::umask(0);  // even a permissive umask gives 0700
  KernelCache cache(options(deep));
  ::umask(old_umask);
  EXPECT_EQ(cache.directory(), deep);
  EXPECT_EQ(mode_of(deep), 0700u);
  EXPECT_EQ(mode_of(root_ / "a"), 0700u);
  const std::string k = key("a.cu");
  cache.get_or_build(k, builder(k));
  EXPECT_EQ(mode_of(deep / "v1"), 0700u);
  EXPECT_EQ(mode_of(entry_path(deep, k).parent_path()), 0700u);
  EXPECT_TRUE(cache.warnings().empty()) << joined(cache.warnings());
}

TEST_F(JitCacheTest, DirectoryRemovedWhileRunningIsMadeAgain) {
  KernelCache cache(options());
  const std::string a = key("a.cu"), b = key("b.cu");
  cache.get_or_build(a, builder(a));
  fs::remove_all(dir_);
  EXPECT_EQ(cache.get_or_build(b, builder(b)).source, CacheSource::built);
  EXPECT_EQ(mode_of(dir_), 0700u);
  EXPECT_EQ(KernelCache(options()).find(b), jit_cache_payload(b));
  EXPECT_TRUE(cache.warnings().empty()) << joined(cache.warnings());
}

// Found in issue 24: the root was judged, the folders under it were not, so
// a v1/ or shard made 0777 was still served from. Now each folder between
// the root and the entry is judged, in the records cache (records/) too.
TEST_F(JitCacheTest, SubfoldersThatFailTheTrustRuleAreNotServedFrom) {
  const std::string k = key("a.cu");
  for (const fs::path& cache_dir : {dir_, dir_ / "records"}) {
    KernelCache(options(cache_dir)).get_or_build(k, builder(k));
    const fs::path shard = entry_path(cache_dir, k).parent_path();
    for (const fs::path& folder : {cache_dir / "v1", shard}) {
      ASSERT_TRUE(fs::exists(entry_path(cache_dir, k)));
      ::chmod(folder.c_str(), 0777);
      KernelCache cache(options(cache_dir));
      EXPECT_EQ(cache.get_or_build(k, builder(k)).source, CacheSource::built) << folder;
      EXPECT_TRUE(contains(cache.warnings(), folder.string() + ": it is writable by others"))
          << joined(cache.warnings());
      EXPECT_TRUE(fs::exists(entry_path(cache_dir, k))) << "nothing removed through " << folder;
      ::chmod(folder.c_str(), 0700);
      EXPECT_EQ(KernelCache(options(cache_dir)).find(k), jit_cache_payload(k)) << "fixed: served";
    }
  }
}

// Found in issue 24: a shard swapped for a link to another user's 0777
// folder was followed, its entries served and new ones written there.
TEST_F(JitCacheTest, AShardReplacedByALinkIsNeitherReadWrittenNorEvictedThrough) {
  const std::string k = key("a.cu");
  KernelCache(options()).get_or_build(k, builder(k));
  const fs::path shard = entry_path(dir_, k).parent_path();
  const fs::path planted = root_ / "planted";
  fs::create_directories(planted);
  ::chmod(planted.c_str(), 0777);
  fs::copy_file(entry_path(dir_, k), planted / entry_path(dir_, k).filename());
  fs::remove_all(shard);
  fs::create_directory_symlink(planted, shard);

  KernelCache cache(options());
  EXPECT_EQ(cache.get_or_build(k, builder(k)).source, CacheSource::built);
  EXPECT_TRUE(contains(cache.warnings(), shard.string() + " is a symbolic link"))
      << joined(cache.warnings());
  EXPECT_TRUE(cache.list().empty()) << "nothing listed through the link";
  EXPECT_TRUE(cache.verify().empty());
  cache.clear();
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(planted)) ++files;
  EXPECT_EQ(files, 1u) << "only the planted entry: nothing written, locked or removed there";
}

TEST_F(JitCacheTest, DirectoryWritableByOthersIsRefusedWithOneWarning) {
  for (const mode_t mode : {0777, 0770, 01777}) {
    fs::create_directories(dir_);
    ::chmod(dir_.c_str(), mode);
    KernelCache cache(options());
    EXPECT_EQ(cache.directory(), std::nullopt);
    const auto warnings = cache.warnings();
    ASSERT_EQ(warnings.size(), 1u) << joined(warnings);
    EXPECT_NE(warnings[0].find(dir_.string()), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("memory only"), std::string::npos) << warnings[0];
    // Memory only: still works, exactly one warning however many requests.
    for (const char* name : {"a.cu", "b.cu", "c.cu"}) {
      const std::string k = key(name);
      EXPECT_EQ(cache.get_or_build(k, builder(k)).source, CacheSource::built);
      EXPECT_EQ(cache.get_or_build(k, builder(k)).source, CacheSource::memory);
    }
    EXPECT_EQ(cache.warnings().size(), 1u) << joined(cache.warnings());
    EXPECT_FALSE(fs::exists(dir_ / "v1"));
    fs::remove_all(dir_);
  }
}

TEST_F(JitCacheTest, AFileWhereTheDirectoryShouldBeMeansMemoryOnly) {
  std::ofstream(root_ / "file") << "x";
  KernelCache cache(options(root_ / "file" / "cache"));
  EXPECT_EQ(cache.directory(), std::nullopt);
  ASSERT_EQ(cache.warnings().size(), 1u);
  const std::string k = key("a.cu");
  EXPECT_EQ(*cache.get_or_build(k, builder(k)).image, jit_cache_payload(k));
}

// ---------------------------------------------------------------- other processes

const fs::path kRacer = ARCHFIT_JIT_CACHE_RACER;

// Starts the helper with `args`, its stdout into `out` when given.
pid_t spawn_racer(const std::vector<std::string>& args, const fs::path& out = {}) {
  std::vector<std::string> all{kRacer.string()};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : all) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!out.empty())
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  if (posix_spawn(&pid, kRacer.c_str(), &actions, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs the helper's probe on `dir`, as `uid` when root (root can write anywhere).
std::string probe(const fs::path& dir, const std::string& k, const fs::path& out, int* status) {
  std::vector<std::string> args{"probe", dir.string(), k};
  if (::geteuid() == 0) args.push_back("65534");
  *status = wait_for(spawn_racer(args, out));
  return slurp(out);
}

TEST_F(JitCacheTest, ReadOnlyPrimaryIsReadButNeverWritten) {
  const std::string a = key("a.cu"), b = key("b.cu");
  KernelCache(options()).get_or_build(a, builder(a));
  ::chmod(root_.c_str(), 0711);  // the helper may run as another user
  if (::geteuid() == 0) {
    for (const auto& path : fs::recursive_directory_iterator(dir_))
      ASSERT_EQ(::chown(path.path().c_str(), 65534, 65534), 0);
    ASSERT_EQ(::chown(dir_.c_str(), 65534, 65534), 0);
  }
  ::chmod(dir_.c_str(), 0500);
  const auto before = fs::last_write_time(entry_path(a));
  int status = 0;
  std::string output = probe(dir_, a, root_ / "probe-a.txt", &status);
  if (status == 3) GTEST_SKIP() << "cannot switch to another user to make a directory read-only";
  ASSERT_EQ(status, 0) << output;
  EXPECT_NE(output.find("directory: memory"), std::string::npos) << output;
  EXPECT_NE(output.find("source: readonly"), std::string::npos) << output;
  EXPECT_NE(output.find("bytes: right"), std::string::npos) << output;
  EXPECT_NE(
      output.find("warning: kernel cache: cache directory " + dir_.string() + " is not writable"),
      std::string::npos)
      << output;
  EXPECT_EQ(std::count(output.begin(), output.end(), '\n'), 4) << output;  // one warning

  output = probe(dir_, b, root_ / "probe-b.txt", &status);
  ASSERT_EQ(status, 0) << output;
  EXPECT_NE(output.find("source: built"), std::string::npos) << output;
  EXPECT_FALSE(fs::exists(entry_path(b)));
  EXPECT_EQ(fs::last_write_time(entry_path(a)), before);  // not even touched
}

// A process under a file size limit (RLIMIT_FSIZE) must not write past it:
// the kernel would kill it with SIGXFSZ, and a host with it. Entries over the
// limit stay in memory, with one warning, however many are built. In a child
// process, whose limit the test sets.
TEST_F(JitCacheTest, AFileSizeLimitKeepsImagesInMemoryWithOneWarningAndNoSignal) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    struct rlimit limit {
      4096, 4096
    };
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(10);
    KernelCache cache(options());
    for (const char* name : {"a.cu", "b.cu", "c.cu"}) {
      const std::string k = key(name);
      const auto result = cache.get_or_build(k, builder(k, 8192));
      if (*result.image != jit_cache_payload(k, 8192)) ::_exit(11);
      if (fs::exists(entry_path(k))) ::_exit(12);
    }
    const auto warnings = cache.warnings();
    if (warnings.size() != 1) ::_exit(13);
    if (warnings[0].find("file size limit (RLIMIT_FSIZE, 4096 bytes)") == std::string::npos)
      ::_exit(14);
    if (warnings[0].find("memory only") == std::string::npos) ::_exit(15);
    // A small image still fits under the limit... but writing stays off.
    const std::string small = key("small.cu");
    if (*cache.get_or_build(small, builder(small, 100)).image != jit_cache_payload(small, 100))
      ::_exit(16);
    ::_exit(cache.warnings().size() == 1 ? 0 : 17);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_FALSE(WIFSIGNALED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's check that failed (see the test's _exit codes)";
}

// A full disk: a 64 KiB tmpfs holds a few entries, then every write fails
// with ENOSPC; the cache answers every request, warns once, and keeps the
// rest in memory. Needs root to mount (skipped elsewhere).
TEST_F(JitCacheTest, AFullDiskDegradesToMemoryWithOneWarning) {
  fs::create_directories(dir_);
  if (::geteuid() != 0 || ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=64k,mode=0700") != 0)
    GTEST_SKIP() << "cannot mount a small tmpfs here: " << std::strerror(errno);
  struct Unmount {
    fs::path dir;
    ~Unmount() { ::umount(dir.c_str()); }
  } unmount{dir_};
  KernelCache cache(options());
  size_t on_disk = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string k = key("k" + std::to_string(i) + ".cu");
    const auto result = cache.get_or_build(k, builder(k, 8192));
    ASSERT_EQ(*result.image, jit_cache_payload(k, 8192)) << i;
    if (fs::exists(entry_path(k))) ++on_disk;
  }
  EXPECT_GT(on_disk, 0u);
  EXPECT_LT(on_disk, 40u);
  const auto warnings = cache.warnings();
  ASSERT_EQ(warnings.size(), 1u) << joined(warnings);
  EXPECT_NE(warnings[0].find("No space left on device"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("memory only"), std::string::npos) << warnings[0];
  // What was written is whole: every entry on disk verifies.
  for (const auto& entry : cache.verify())
    EXPECT_TRUE(entry.valid) << entry.key << ": " << entry.problem;
}

TEST_F(JitCacheTest, ReadOnlySecondaryDirectoriesAreReadAndNeverWritten) {
  const fs::path bundle = root_ / "bundle", other_bundle = root_ / "other";
  const std::string a = key("a.cu"), b = key("b.cu"), c = key("c.cu");
  KernelCache(options(bundle)).get_or_build(a, builder(a));
  KernelCache(options(bundle)).get_or_build(c, builder(c));
  fs::create_directories(other_bundle);
  ::chmod(bundle.c_str(), 0500);
  const auto a_time = fs::last_write_time(entry_path(bundle, a));
  // A damaged entry in the bundle: ignored, left alone, and built into the primary.
  fs::resize_file(entry_path(bundle, c), 50);

  auto opts = options();
  opts.readonly_dirs = {other_bundle, bundle, root_ / "missing"};
  KernelCache cache(opts);
  EXPECT_EQ(cache.directory(), dir_);
  const auto hit = cache.get_or_build(a, builder(a));
  EXPECT_EQ(hit.source, CacheSource::readonly);
  EXPECT_EQ(*hit.image, jit_cache_payload(a));
  EXPECT_FALSE(fs::exists(entry_path(a)));  // not copied into the primary
  EXPECT_EQ(fs::last_write_time(entry_path(bundle, a)), a_time);

  const auto built = cache.get_or_build(c, builder(c));
  EXPECT_EQ(built.source, CacheSource::built);
  EXPECT_TRUE(fs::exists(entry_path(c)));
  EXPECT_EQ(fs::file_size(entry_path(bundle, c)), 50u);
  EXPECT_TRUE(contains(cache.warnings(), "ignoring " + entry_path(bundle, c).string()))
      << joined(cache.warnings());
  EXPECT_TRUE(contains(cache.warnings(), (root_ / "missing").string())) << joined(cache.warnings());

  // The primary comes first.
  EXPECT_EQ(KernelCache(opts).get_or_build(c, builder(c)).source, CacheSource::primary);
  // Maintenance leaves the bundle alone.
  const auto checked = cache.verify();
  EXPECT_EQ(checked.size(), 3u);
  EXPECT_EQ(std::count_if(checked.begin(), checked.end(), [](auto& e) { return !e.valid; }), 1);
  EXPECT_EQ(cache.clear(), 1u);
  EXPECT_TRUE(fs::exists(entry_path(bundle, a)));
  EXPECT_TRUE(fs::exists(entry_path(bundle, c)));
  EXPECT_FALSE(fs::exists(entry_path(c)));
}

TEST_F(JitCacheTest, ReadOnlyDirectoryWritableByOthersIsRefused) {
  const fs::path bundle = root_ / "bundle";
  const std::string a = key("a.cu");
  KernelCache(options(bundle)).get_or_build(a, builder(a));
  ::chmod(bundle.c_str(), 0777);
  auto opts = options(std::nullopt);
  opts.readonly_dirs = {bundle};
  KernelCache cache(opts);
  EXPECT_EQ(cache.get_or_build(a, builder(a)).source, CacheSource::built);
  EXPECT_TRUE(contains(cache.warnings(), "refusing read-only cache directory " + bundle.string()))
      << joined(cache.warnings());
}

TEST_F(JitCacheTest, BudgetEvictsTheLeastRecentlyUsed) {
  // Entries of 1000 + 64 bytes; three fit in 3500, four do not.
  const std::string a = key("a.cu"), b = key("b.cu"), c = key("c.cu"), d = key("d.cu");
  const auto opts = options(dir_, 3500);
  {
    KernelCache cache(opts);
    for (const auto& k : {a, b, c}) cache.get_or_build(k, builder(k, 1000));
  }
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(entry_path(a), now - std::chrono::seconds(300));
  fs::last_write_time(entry_path(b), now - std::chrono::seconds(200));
  fs::last_write_time(entry_path(c), now - std::chrono::seconds(100));
  KernelCache cache(opts);
  EXPECT_EQ(cache.get_or_build(a, builder(a, 1000)).source, CacheSource::primary);  // a is used now
  EXPECT_EQ(cache.get_or_build(d, builder(d, 1000)).source, CacheSource::built);
  EXPECT_TRUE(fs::exists(entry_path(a)));
  EXPECT_FALSE(fs::exists(entry_path(b)));  // the least recently used
  EXPECT_FALSE(fs::exists(entry_path(b).replace_extension(".lock")));
  EXPECT_TRUE(fs::exists(entry_path(c)));
  EXPECT_TRUE(fs::exists(entry_path(d)));
  EXPECT_LE(cache.stats().bytes, 3500u);
  const auto listed = cache.list();
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed.front().key, c);  // oldest use first
  EXPECT_TRUE(listed.front().valid);
}

TEST_F(JitCacheTest, ImageLargerThanTheBudgetStaysInMemory) {
  KernelCache cache(options(dir_, 2000));
  const std::string k = key("a.cu");
  EXPECT_EQ(cache.get_or_build(k, builder(k, 5000)).image->size(), 5000u);
  EXPECT_FALSE(fs::exists(entry_path(k)));
  EXPECT_TRUE(contains(cache.warnings(), "does not fit the cache budget"))
      << joined(cache.warnings());
}

TEST_F(JitCacheTest, VerifyRemovesBadEntriesAndClearRemovesEverything) {
  const std::string a = key("a.cu"), b = key("b.cu"), dead = key("dead.cu");
  KernelCache cache(options());
  cache.get_or_build(a, builder(a));
  cache.get_or_build(b, builder(b));
  fs::resize_file(entry_path(b), fs::file_size(entry_path(b)) - 1);
  // What a killed writer leaves: a temporary file and a lock file, no entry.
  const fs::path sub = entry_path(dead).parent_path();
  fs::create_directories(sub);
  std::ofstream(sub / (dead + ".12345.0.tmp")) << "half an entry";
  std::ofstream(sub / (dead + ".lock"));
  std::ofstream(sub / "README") << "not ours";

  EXPECT_EQ(cache.list().size(), 2u);
  const auto checked = cache.verify();
  ASSERT_EQ(checked.size(), 2u);
  EXPECT_TRUE(checked[checked[0].key == a ? 0 : 1].valid);
  const auto& bad = checked[checked[0].key == b ? 0 : 1];
  EXPECT_FALSE(bad.valid);
  EXPECT_NE(bad.problem.find("truncated"), std::string::npos) << bad.problem;
  EXPECT_FALSE(fs::exists(entry_path(b)));

  EXPECT_EQ(cache.clear(), 1u);
  EXPECT_EQ(cache.stats().memory_entries, 0u);
  EXPECT_EQ(cache.stats().entries, 0u);
  std::set<std::string> left;
  for (const auto& path : fs::recursive_directory_iterator(dir_))
    if (path.is_regular_file()) left.insert(path.path().filename().string());
  EXPECT_EQ(left, std::set<std::string>{"README"});
  EXPECT_EQ(cache.get_or_build(a, builder(a)).source, CacheSource::built);
}

TEST_F(JitCacheTest, EightProcessesOfFourThreadsBuildEachKeyOnce) {
  const fs::path log = root_ / "builds.log", go = root_ / "go";
  std::vector<std::string> keys{key("shared.cu")};
  for (int i = 0; i < 8; ++i) keys.push_back(key("k" + std::to_string(i) + ".cu"));
  std::vector<pid_t> racers;
  for (int p = 0; p < 8; ++p) {
    std::vector<std::string> args{"race", dir_.string(), log.string(), go.string()};
    args.insert(args.end(), keys.begin(), keys.end());
    racers.push_back(spawn_racer(args));
    ASSERT_GT(racers.back(), 0);
  }
  std::ofstream{go};  // all start together
  for (pid_t pid : racers) EXPECT_EQ(wait_for(pid), 0) << "a racer got wrong bytes or failed";

  std::map<std::string, int> builds;
  std::istringstream lines(slurp(log));
  for (std::string line; std::getline(lines, line);) ++builds[line];
  for (const auto& k : keys) EXPECT_EQ(builds[k], 1) << k;
  EXPECT_EQ(builds.size(), keys.size());
  KernelCache cache(options());
  for (const auto& k : keys) EXPECT_EQ(cache.find(k), jit_cache_payload(k)) << k;
  EXPECT_TRUE(cache.warnings().empty()) << joined(cache.warnings());
}

TEST_F(JitCacheTest, BuilderKilledMidBuildLeavesNoEntryAndNoLock) {
  const std::string k = key("a.cu");
  const fs::path marker = root_ / "building";
  const pid_t pid = spawn_racer({"build-slowly", dir_.string(), k, marker.string()});
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 1000 && !fs::exists(marker); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(fs::exists(marker)) << "the helper never started building";
  // It holds the key's lock while it builds...
  const fs::path lock = entry_path(k).replace_extension(".lock");
  {
    const int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    EXPECT_NE(::flock(fd, LOCK_EX | LOCK_NB), 0);
    ::close(fd);
  }
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  EXPECT_EQ(wait_for(pid), 128 + SIGKILL);
  // ...and after SIGKILL leaves no entry a reader accepts and no lock that blocks.
  auto cache = std::make_shared<KernelCache>(options());
  EXPECT_EQ(cache->find(k), std::nullopt);
  auto done = std::make_shared<std::promise<CacheResult>>();
  auto result = done->get_future();
  std::thread([cache, done, k, build = builder(k)] {
    done->set_value(cache->get_or_build(k, build));
  }).detach();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(5)), std::future_status::ready)
      << "the dead builder's lock still blocks";
  const auto got = result.get();
  EXPECT_EQ(got.source, CacheSource::built);
  EXPECT_LT(got.milliseconds, 1000.0);
  EXPECT_EQ(KernelCache(options()).find(k), jit_cache_payload(k));
}

// ---------------------------------------------------------------- the environment

TEST(CacheLocation, ByteCounts) {
  EXPECT_EQ(store::parse_byte_count("1073741824"), 1073741824u);
  EXPECT_EQ(store::parse_byte_count("0"), 0u);
  EXPECT_EQ(store::parse_byte_count("4K"), 4096u);
  EXPECT_EQ(store::parse_byte_count("512MiB"), 512ull << 20);
  EXPECT_EQ(store::parse_byte_count("1G"), 1ull << 30);
  EXPECT_EQ(store::parse_byte_count("2TB"), 2ull << 40);
  for (const char* bad : {"", "-1", "1X", "1 G", "G", "1Gi", "99999999999999999999", "20000000T"})
    EXPECT_EQ(store::parse_byte_count(bad), std::nullopt) << bad;
}

}  // namespace

// The cache under stress (issue 8): 16 processes of 8 threads mix builds,
// finds, discards, evictions (a 48 KiB budget) and clears over 24 keys for
// ARCHFIT_CACHE_STRESS_SECONDS (default 60), while a tamperer flips bytes in
// and truncates entry files every millisecond and this test kills a worker
// with SIGKILL every second and starts another. Every worker still running
// at the end must finish in time (no hang), with every answer right (no
// corrupt entry accepted) and no error; afterwards no lock blocks and every
// key is answered right.
TEST_F(JitCacheTest, SixteenProcessesOfEightThreadsSurviveTamperingAndSigkill) {
  const char* given = std::getenv("ARCHFIT_CACHE_STRESS_SECONDS");
  const int seconds = given ? std::max(2, std::atoi(given)) : 60;
  constexpr int kWorkers = 16, kKeys = 24;
  const auto started = std::chrono::steady_clock::now();
  const auto left = [&] {
    return seconds - static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(
                                          std::chrono::steady_clock::now() - started)
                                          .count());
  };
  int spawned = 0;
  const auto spawn = [&](int run_seconds) {
    const fs::path out = root_ / ("worker-" + std::to_string(spawned++) + ".txt");
    return std::make_pair(
        spawn_racer({"stress", dir_.string(), std::to_string(run_seconds), std::to_string(kKeys)},
                    out),
        out);
  };
  std::vector<std::pair<pid_t, fs::path>> workers;
  for (int i = 0; i < kWorkers; ++i) workers.push_back(spawn(seconds));
  const fs::path tamper_out = root_ / "tamper.txt";
  const pid_t tamperer =
      spawn_racer({"tamper", dir_.string(), std::to_string(seconds)}, tamper_out);
  ASSERT_GT(tamperer, 0);
  std::minstd_rand random(7);
  int killed = 0;
  while (left() > 2) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    auto& victim = workers[random() % workers.size()];
    if (::kill(victim.first, SIGKILL) == 0 && wait_for(victim.first) == 128 + SIGKILL) ++killed;
    victim = spawn(std::max(1, left()));
  }
  // Everyone still running stops by itself, in time.
  uint64_t requests = 0;
  int finished = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds + 60);
  for (const auto& [pid, out] : workers) {
    int status = 0;
    pid_t done = 0;
    while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (done == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ADD_FAILURE() << "worker " << pid << " hung";
      continue;
    }
    const std::string text = slurp(out);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "worker " << pid << ": " << text;
    EXPECT_NE(text.find(" wrong: 0 errors: 0"), std::string::npos) << text;
    unsigned long long count = 0;
    if (std::sscanf(text.c_str(), "requests: %llu", &count) == 1) requests += count;
    ++finished;
  }
  EXPECT_EQ(wait_for(tamperer), 0);
  const std::string tampered = slurp(tamper_out);
  // The figures, for the note.
  std::printf(
      "[stress] %d s: %d workers finished, %d killed with SIGKILL, %llu requests answered, %s",
      seconds, finished, killed, static_cast<unsigned long long>(requests), tampered.c_str());
  EXPECT_GT(killed, 0);
  EXPECT_GT(requests, 0u);
  EXPECT_NE(tampered.find("tampered: "), std::string::npos);
  EXPECT_EQ(tampered.find("tampered: 0\n"), std::string::npos) << "the tamperer never hit an entry";

  // Afterwards: no lock left blocks, and every key is answered right.
  auto cache = std::make_shared<KernelCache>(options(dir_, 48 * 1024));
  for (int i = 0; i < kKeys; ++i) {
    const std::string k = archfit::testing::jit_cache_stress_key(static_cast<size_t>(i));
    auto done = std::make_shared<std::promise<CacheResult>>();
    auto result = done->get_future();
    std::thread([cache, done, k] {
      done->set_value(
          cache->get_or_build(k, [k] { return archfit::testing::jit_cache_stress_payload(k); }));
    }).detach();
    ASSERT_EQ(result.wait_for(std::chrono::seconds(5)), std::future_status::ready)
        << k << ": a lock left by a killed worker still blocks";
    EXPECT_EQ(*result.get().image, archfit::testing::jit_cache_stress_payload(k)) << k;
  }
}
