// jit/nvrtc/nvrtc_facts: the discovery record that lets a process whose image
// is cached skip finding and loading NVRTC, and everything that must make the
// record stale. Against the real NVRTC of the toolkit this was built with.
#include "jit/nvrtc/nvrtc_facts.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>

#include "jit/cached_compile.hpp"

namespace fs = std::filesystem;
using namespace archfit::jit;

namespace {

const fs::path kToolkitNvrtc = fs::path(ARCHFIT_CUDA_LIB_DIR) / "libnvrtc.so";

class NvrtcFactsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kToolkitNvrtc)) GTEST_SKIP() << "no " << kToolkitNvrtc << " to test with";
    dir_ = fs::temp_directory_path() /
           ("archfit_nvrtc_facts_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "lib");
    fs::create_symlink(fs::canonical(kToolkitNvrtc), dir_ / "lib" / "libnvrtc.so.13");
    KernelCache::Options options;
    options.dir = dir_ / "cache";
    images_ = std::make_unique<KernelCache>(options);
  }
  void TearDown() override {
    images_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Only the temporary lib directory is searched.
  NvrtcSearch search() const {
    NvrtcSearch search;
    search.ld_library_path = {dir_ / "lib"};
    search.default_toolkit.clear();
    return search;
  }

  // Nvrtc::discover, counted.
  std::function<Nvrtc(const NvrtcSearch&)> counted() {
    return [this](const NvrtcSearch& search) {
      ++discoveries_;
      return Nvrtc::discover(search);
    };
  }

  fs::path dir_;
  std::unique_ptr<KernelCache> images_;
  std::atomic<int> discoveries_{0};
};

TEST_F(NvrtcFactsTest, ASecondProcessKnowsNvrtcFromTheRecordWithoutLoadingIt) {
  LazyNvrtc first(search(), counted());
  const NvrtcFacts discovered = first.facts(*images_);
  EXPECT_EQ(discoveries_, 1);
  EXPECT_FALSE(first.facts_from_record());
  EXPECT_EQ(discovered.path, dir_ / "lib" / "libnvrtc.so.13");
  EXPECT_FALSE(discovered.supported_archs.empty());
  EXPECT_EQ(discovered.build.rfind(discovered.version.to_string() + ".", 0), 0u)
      << discovered.build;

  LazyNvrtc second(search(), counted());  // as a new process would
  const NvrtcFacts recorded = second.facts(*images_);
  EXPECT_EQ(discoveries_, 1) << "the record should have answered";
  EXPECT_TRUE(second.facts_from_record());
  EXPECT_FALSE(second.is_loaded());
  EXPECT_TRUE(same_compiler(recorded, discovered));
  EXPECT_EQ(recorded.description, discovered.description);
  EXPECT_EQ(recorded.origin, discovered.origin);
  // Records are kept apart from the images.
  EXPECT_TRUE(images_->list().empty());
  EXPECT_TRUE(fs::exists(dir_ / "cache" / "records"));
}

TEST_F(NvrtcFactsTest, ACopyAddedToASearchedDirectoryMakesTheRecordStale) {
  LazyNvrtc(search(), counted()).facts(*images_);
  ASSERT_EQ(discoveries_, 1);
  std::ofstream(dir_ / "lib" / "libnvrtc.so.12") << "not a library";
  LazyNvrtc after(search(), counted());
  after.facts(*images_);
  EXPECT_EQ(discoveries_, 2);
  EXPECT_FALSE(after.facts_from_record());
}

TEST_F(NvrtcFactsTest, AnotherSearchHasAnotherRecord) {
  LazyNvrtc(search(), counted()).facts(*images_);
  NvrtcSearch other = search();
  other.cuda_home = dir_ / "no-such-toolkit";
  LazyNvrtc with_cuda_home(other, counted());
  with_cuda_home.facts(*images_);
  EXPECT_EQ(discoveries_, 2);
  EXPECT_FALSE(with_cuda_home.facts_from_record());
}

TEST_F(NvrtcFactsTest, ALibraryWrittenInPlaceMakesTheRecordStale) {
  // A copy, so that its time can change without touching the toolkit's; its
  // directory's listing stays the same, so only the library's identity tells.
  fs::remove(dir_ / "lib" / "libnvrtc.so.13");
  fs::copy_file(kToolkitNvrtc, dir_ / "lib" / "libnvrtc.so.13");
  LazyNvrtc(search(), counted()).facts(*images_);
  ASSERT_EQ(discoveries_, 1);
  const auto dir_time = fs::last_write_time(dir_ / "lib");
  fs::last_write_time(dir_ / "lib" / "libnvrtc.so.13",
                      fs::file_time_type::clock::now() + std::chrono::seconds(5));
  ASSERT_EQ(fs::last_write_time(dir_ / "lib"), dir_time);
  LazyNvrtc after(search(), counted());
  after.facts(*images_);
  EXPECT_EQ(discoveries_, 2);
  EXPECT_FALSE(after.facts_from_record());
}

TEST_F(NvrtcFactsTest, ARecordThatDoesNotDescribeTheLoadedNvrtcIsReplacedAndSaysSo) {
  // Recorded by a process that loaded the toolkit's copy by its own path ...
  LazyNvrtc(search(), [](const NvrtcSearch&) {
    return Nvrtc::load(kToolkitNvrtc);
  }).facts(*images_);
  // ... read by one whose discovery loads the copy in the searched directory.
  LazyNvrtc reader(search(), counted());
  const NvrtcFacts recorded = reader.facts(*images_);
  EXPECT_EQ(recorded.path, kToolkitNvrtc);
  EXPECT_THROW(reader.loaded(*images_), StaleNvrtcFacts);
  EXPECT_EQ(reader.facts(*images_).path, dir_ / "lib" / "libnvrtc.so.13");
  EXPECT_NO_THROW(reader.loaded(*images_));
  // The replaced record is what the next process reads.
  LazyNvrtc next(search(), counted());
  EXPECT_EQ(next.facts(*images_).path, dir_ / "lib" / "libnvrtc.so.13");
  EXPECT_TRUE(next.facts_from_record());
}

TEST_F(NvrtcFactsTest, ACompileKeyedFromStaleFactsCachesNothingAndTheRetryIsKeyedRight) {
  LazyNvrtc(search(), [](const NvrtcSearch&) {
    return Nvrtc::load(kToolkitNvrtc);
  }).facts(*images_);
  LazyNvrtc reader(search(), counted());
  CompileRequest request;
  request.source = "extern \"C\" __global__ void k(float* x) { x[0] = 1.0f; }";
  request.target = "sm_90";
  EXPECT_THROW(compile_cached(reader, *images_, request), StaleNvrtcFacts);
  EXPECT_TRUE(images_->list().empty());
  const CachedCompile compiled = compile_cached(reader, *images_, request);
  EXPECT_EQ(compiled.source, CacheSource::built);
  EXPECT_EQ(compiled.key, compile_key(reader.loaded(*images_), request));
}

TEST_F(NvrtcFactsTest, WithoutACacheDirectoryEveryProcessDiscovers) {
  KernelCache memory_only(KernelCache::Options{});
  LazyNvrtc(search(), counted()).facts(memory_only);
  LazyNvrtc second(search(), counted());
  second.facts(memory_only);
  EXPECT_EQ(discoveries_, 2);
  EXPECT_FALSE(second.facts_from_record());
}

TEST_F(NvrtcFactsTest, NoNvrtcInTheSearchThrowsAndRecordsNothing) {
  fs::remove(dir_ / "lib" / "libnvrtc.so.13");
  LazyNvrtc none(search());
  EXPECT_THROW(none.facts(*images_), NvrtcError);
  EXPECT_TRUE(KernelCache(record_cache_options(*images_)).list().empty());
}

}  // namespace
