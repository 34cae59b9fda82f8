#include "check/scan_index.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "check/check.hpp"
#include "check/report_json.hpp"
#include "check_resources.hpp"
#include "fixture_site.hpp"

namespace fs = std::filesystem;
using archfit::binary::FileScan;
using archfit::binary::FileStamp;
using archfit::binary::TreeScan;
using archfit::check::ScanIndex;

namespace {

void expect_same(const FileScan& a, const FileScan& b) {
  EXPECT_EQ(a.path, b.path);
  EXPECT_EQ(a.format, b.format) << a.path;
  EXPECT_EQ(a.machine, b.machine) << a.path;
  ASSERT_EQ(a.linkage.has_value(), b.linkage.has_value()) << a.path;
  if (a.linkage) {
    EXPECT_EQ(a.linkage->name, b.linkage->name);
    EXPECT_EQ(a.linkage->needed, b.linkage->needed);
    EXPECT_EQ(a.linkage->rpath, b.linkage->rpath);
    EXPECT_EQ(a.linkage->runpath, b.linkage->runpath);
  }
  EXPECT_EQ(a.file_size, b.file_size);
  EXPECT_EQ(a.containers, b.containers);
  ASSERT_EQ(a.problems.size(), b.problems.size()) << a.path;
  for (size_t i = 0; i < a.problems.size(); ++i) {
    EXPECT_EQ(a.problems[i].offset, b.problems[i].offset);
    EXPECT_EQ(a.problems[i].message, b.problems[i].message);
  }
  ASSERT_EQ(a.images.size(), b.images.size()) << a.path;
  for (size_t i = 0; i < a.images.size(); ++i) {
    const auto& x = a.images[i];
    const auto& y = b.images[i];
    EXPECT_EQ(x.arch_name(), y.arch_name()) << a.path << " image " << i;
    EXPECT_EQ(x.kind_code, y.kind_code);
    EXPECT_EQ(x.ptx_isa, y.ptx_isa);
    EXPECT_EQ(x.elf_abi, y.elf_abi);
    EXPECT_EQ(x.entry_version, y.entry_version);
    EXPECT_EQ(x.compression, y.compression);
    EXPECT_EQ(x.size, y.size);
    EXPECT_EQ(x.compressed_size, y.compressed_size);
    EXPECT_EQ(x.uncompressed_size, y.uncompressed_size);
    EXPECT_EQ(x.flags, y.flags);
    EXPECT_EQ(x.debug, y.debug);
    EXPECT_EQ(x.relocatable, y.relocatable);
    EXPECT_EQ(x.identifier, y.identifier);
    EXPECT_EQ(x.section, y.section);
    EXPECT_EQ(x.offset, y.offset);
    EXPECT_EQ(x.container_offset, y.container_offset);
    EXPECT_EQ(x.payload_offset, y.payload_offset);
    ASSERT_EQ(x.payload != nullptr, y.payload != nullptr) << a.path << " image " << i;
    if (x.payload) {
      EXPECT_EQ(x.payload->ptx_version, y.payload->ptx_version);
      EXPECT_EQ(x.payload->ptx_target, y.payload->ptx_target);
      EXPECT_EQ(x.payload->cubin_elf_type, y.payload->cubin_elf_type);
      EXPECT_EQ(x.payload->cubin_abi_version, y.payload->cubin_abi_version);
      EXPECT_EQ(x.payload->cubin_sm, y.payload->cubin_sm);
      EXPECT_EQ(x.payload->cubin_e_flags, y.payload->cubin_e_flags);
      EXPECT_EQ(x.payload->cubin_variant, y.payload->cubin_variant);
      EXPECT_EQ(x.payload->toolkit, y.payload->toolkit);
      EXPECT_EQ(x.payload->producer_options, y.payload->producer_options);
      EXPECT_EQ(x.payload->disagreements, y.payload->disagreements);
      EXPECT_EQ(x.payload->error, y.payload->error);
    }
  }
}

class ScanIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fixtures_ = ARCHFIT_FIXTURE_DIR;
    if (!fs::exists(fixtures_ / "sm_86_sm_89.so")) GTEST_SKIP() << "nvcc fixtures are not built";
    top_ = fs::temp_directory_path() /
           ("archfit_index_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(top_);
    tree_ = top_ / "tree";
    cache_ = top_ / "cache";
    fs::create_directories(tree_ / "lib");
    // Every kind of file the scanner reads: host libraries with and without
    // linkage, compressed and debug fatbins, a standalone cubin and PTX
    // (whose images carry payload details), and a truncated library.
    for (const char* name : {"sm_86_sm_89.so", "compute_90.so", "compress_all.so", "debug.so",
                             "rdc.o", "sm_100a.cubin", "compute_90.ptx", "lto_90.fatbin"})
      fs::copy_file(fixtures_ / name, tree_ / "lib" / name);
    std::ifstream whole(fixtures_ / "sm_86_sm_89.so", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(whole)), {});
    std::ofstream(tree_ / "lib" / "truncated.so", std::ios::binary) << bytes.substr(0, 3000);
    let_changes_settle();
  }
  // The index keeps nothing that changed just before the walk began
  // (kRecentChangeNs): a test that wants it kept waits that long.
  static void let_changes_settle() {
    std::this_thread::sleep_for(std::chrono::nanoseconds(archfit::check::kRecentChangeNs) +
                                std::chrono::milliseconds(20));
  }
  void TearDown() override { fs::remove_all(top_); }

  TreeScan scan_with(ScanIndex& index) { return scan_with_root(index, tree_); }
  static TreeScan scan_with_root(ScanIndex& index, const fs::path& root) {
    archfit::binary::TreeScanOptions options;
    options.reuse = [&](const std::string& path, const FileStamp& stamp,
                        const std::string& real_path) {
      return index.take(path, stamp, real_path);
    };
    options.reuse_listing = [&](const std::string& dir, const FileStamp& stamp) {
      return index.listing(dir, stamp);
    };
    return archfit::binary::scan_tree({root}, options);
  }

  fs::path fixtures_, top_, tree_, cache_;
};

}  // namespace

TEST_F(ScanIndexTest, BytesAndBackKeepEveryFieldOfEveryFile) {
  const TreeScan scan = archfit::binary::scan_tree({tree_});
  ASSERT_EQ(scan.files.size(), 9u);
  ScanIndex index = ScanIndex::from_bytes(ScanIndex::to_bytes(scan));
  EXPECT_EQ(index.size(), scan.files.size());
  bool saw_payload = false, saw_problem = false, saw_linkage = false;
  for (size_t i = 0; i < scan.files.size(); ++i) {
    auto reloaded = index.take(scan.files[i].path, scan.stamps[i], scan.real_paths[i]);
    ASSERT_TRUE(reloaded) << scan.files[i].path;
    expect_same(scan.files[i], *reloaded);
    for (const auto& image : reloaded->images) saw_payload |= image.payload != nullptr;
    saw_problem |= !reloaded->problems.empty();
    saw_linkage |= reloaded->linkage.has_value();
    EXPECT_FALSE(index.take(scan.files[i].path, scan.stamps[i], scan.real_paths[i]))
        << "taken twice";
  }
  EXPECT_TRUE(saw_payload && saw_problem && saw_linkage);
  // The real path is part of what must match.
  ScanIndex again = ScanIndex::from_bytes(ScanIndex::to_bytes(scan));
  EXPECT_FALSE(again.take(scan.files[0].path, scan.stamps[0], "/elsewhere/lib.so"));
  EXPECT_FALSE(again.take(scan.files[0].path, scan.stamps[0], ""));
  EXPECT_TRUE(again.take(scan.files[0].path, scan.stamps[0], scan.real_paths[0]));
}

TEST_F(ScanIndexTest, ASecondScanReadsNothingAndAChangedFileIsReadAgain) {
  ScanIndex first = ScanIndex::open(cache_, {tree_});
  EXPECT_EQ(first.problem(), "");
  const TreeScan scanned = scan_with(first);
  EXPECT_EQ(scanned.reused, 0u);
  EXPECT_FALSE(first.describes(scanned));
  ASSERT_EQ(first.save(scanned), "");
  // The cache directory and the index are the user's alone.
  struct stat info {};
  ASSERT_EQ(::stat(cache_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);

  ScanIndex second = ScanIndex::open(cache_, {tree_});
  EXPECT_EQ(second.size(), scanned.files.size());
  const TreeScan reused = scan_with(second);
  EXPECT_EQ(reused.reused, reused.files.size());
  EXPECT_TRUE(second.describes(reused));
  for (size_t i = 0; i < reused.files.size(); ++i) expect_same(scanned.files[i], reused.files[i]);

  // Rewritten in place with other content of the same size: the ctime moves.
  {
    std::fstream file(tree_ / "lib" / "compute_90.so",
                      std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(0);
    file.write(
        "\x7f"
        "ELF",
        4);  // same bytes, new write
  }
  fs::remove(tree_ / "lib" / "rdc.o");
  ASSERT_EQ(second.save(reused), "");
  ScanIndex third = ScanIndex::open(cache_, {tree_});
  const TreeScan after = scan_with(third);
  EXPECT_EQ(after.files.size(), reused.files.size() - 1);
  EXPECT_EQ(after.reused, after.files.size() - 1) << "only the rewritten file is read";
  EXPECT_FALSE(third.describes(after));

  // Other roots are another index.
  EXPECT_EQ(ScanIndex::open(cache_, {tree_ / "lib"}).size(), 0u);
}

// An unchanged directory is not listed again; one that gained a file is,
// and the new file is found.
TEST_F(ScanIndexTest, AnUnchangedDirectoryIsNotListedAndANewFileIsFound) {
  fs::create_directories(tree_ / "other");
  let_changes_settle();
  ScanIndex first = ScanIndex::open(cache_, {tree_});
  const TreeScan scanned = scan_with(first);
  ASSERT_EQ(scanned.directories.size(), 3u);  // tree, tree/lib, tree/other
  EXPECT_EQ(scanned.listings_reused, 0u);
  ASSERT_EQ(first.save(scanned), "");

  ScanIndex second = ScanIndex::open(cache_, {tree_});
  EXPECT_EQ(second.directories(), 3u);
  const TreeScan unchanged = scan_with(second);
  EXPECT_EQ(unchanged.listings_reused, 3u);
  EXPECT_EQ(unchanged.files.size(), scanned.files.size());
  EXPECT_TRUE(second.describes(unchanged));

  fs::copy_file(fixtures_ / "sm_86_sm_89.so", tree_ / "other" / "new.so");
  ScanIndex third = ScanIndex::open(cache_, {tree_});
  const TreeScan grown = scan_with(third);
  EXPECT_EQ(grown.listings_reused, 2u) << "tree/other changed";
  ASSERT_EQ(grown.files.size(), scanned.files.size() + 1);
  EXPECT_EQ(grown.reused, scanned.files.size());
  EXPECT_FALSE(third.describes(grown));
}

// What changed just before the walk began is not kept, so a change made in
// the same tick of the file system's clock is not missed: the next check
// reads it again, and only then keeps it.
TEST_F(ScanIndexTest, WhatChangedJustBeforeTheWalkIsReadAgainNextTime) {
  fs::copy_file(fixtures_ / "sm_86_sm_89.so", tree_ / "lib" / "fresh.so");
  ScanIndex first = ScanIndex::open(cache_, {tree_});
  const TreeScan scanned = scan_with(first);
  ASSERT_EQ(first.save(scanned), "");
  ScanIndex second = ScanIndex::open(cache_, {tree_});
  EXPECT_EQ(second.size(), scanned.files.size() - 1) << "fresh.so is not kept";
  EXPECT_EQ(second.directories(), 1u) << "tree/lib changed: only tree is kept";
  const TreeScan again = scan_with(second);
  EXPECT_EQ(again.reused, scanned.files.size() - 1);
  EXPECT_TRUE(second.describes(again)) << "fresh.so is still too recent: nothing new to keep";

  let_changes_settle();
  const TreeScan settled_scan = scan_with(second);  // a walk that began after the change settled
  ASSERT_EQ(second.save(settled_scan), "");
  EXPECT_EQ(ScanIndex::open(cache_, {tree_}).size(), scanned.files.size());
}

TEST_F(ScanIndexTest, ABadIndexIsAnEmptyOneThatSaysWhy) {
  ScanIndex first = ScanIndex::open(cache_, {tree_});
  ASSERT_EQ(first.save(scan_with(first)), "");
  // Flip one byte of the stored entry: its checksum refuses it.
  fs::path entry;
  for (const auto& file : fs::recursive_directory_iterator(cache_ / "scan-index"))
    if (file.path().extension() == ".bin") entry = file.path();
  ASSERT_FALSE(entry.empty());
  {
    std::fstream file(entry, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(-10, std::ios::end);
    char byte = 0;
    file.read(&byte, 1);
    file.seekp(-10, std::ios::end);
    byte = static_cast<char>(byte ^ 0x40);
    file.write(&byte, 1);
  }
  const ScanIndex bad = ScanIndex::open(cache_, {tree_});
  EXPECT_EQ(bad.size(), 0u);
  EXPECT_NE(bad.problem().find(entry.string()), std::string::npos) << bad.problem();

  // Bytes that pass a checksum but are not an index.
  const auto error_of = [](std::vector<std::byte> bytes) -> std::string {
    try {
      ScanIndex::from_bytes(bytes);
    } catch (const std::runtime_error& error) {
      return error.what();
    }
    return "(no error)";
  };
  EXPECT_NE(error_of({}).find("too short"), std::string::npos);
  std::vector<std::byte> huge(16, std::byte{0xff});
  EXPECT_NE(error_of(huge).find("claims"), std::string::npos);
  std::vector<std::byte> garbage(64, std::byte{0x01});
  garbage[0] = std::byte{40};
  for (size_t i = 1; i < 8; ++i) garbage[i] = std::byte{0};
  EXPECT_NE(error_of(garbage), "(no error)");
}

TEST_F(ScanIndexTest, ACacheDirectoryOthersCanWriteIsRefused) {
  fs::create_directories(cache_);
  ::chmod(cache_.c_str(), 0777);
  ScanIndex index = ScanIndex::open(cache_, {tree_});
  EXPECT_NE(index.problem().find(cache_.string()), std::string::npos) << index.problem();
  const TreeScan scan = scan_with(index);
  EXPECT_EQ(scan.reused, 0u);
  EXPECT_NE(index.save(scan), "");
  EXPECT_FALSE(fs::exists(cache_ / "scan-index"));
}

// A check with the index says the same thing twice, reading nothing the
// second time; only its "scan" figures differ.
TEST_F(ScanIndexTest, ACheckAnswersTheSameFromTheIndex) {
  archfit::testing::FixtureSite site("index_check");
  site.install("torch", "2.5.1+cu124",
               {{"torch/lib/libtorch_cuda.so", fixtures_ / "sm_86_sm_89.so"}});
  site.write("torch/version.py", "__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\n");
  let_changes_settle();
  archfit::check::CheckRequest options;
  options.site_packages = {site.root()};
  options.gpus = {"RTX 5090"};
  auto resources = archfit::testing::check_resources("/no-driver-here/libcuda.so.1");
  resources.scan_index_dir = cache_;
  const auto first = archfit::check::run_check(options, resources);
  const auto second = archfit::check::run_check(options, resources);
  EXPECT_EQ(first.scan.reused, 0u);
  EXPECT_GT(second.scan.files, 0u);
  EXPECT_EQ(second.scan.reused, second.scan.files);
  EXPECT_EQ(second.scan.index, "");
  auto a = archfit::check::check_document(first);
  auto b = archfit::check::check_document(second);
  EXPECT_EQ(b["scan"]["reused"], b["scan"]["files"]);
  a.erase("scan");
  b.erase("scan");
  EXPECT_EQ(a, b);
  EXPECT_EQ(second.verdict, archfit::check::OverallVerdict::fails);
}

// Found in issue 34: a scan-index/ folder at mode 0777 inside a good cache
// directory was used silently; the kernel cache refuses the same.
TEST_F(ScanIndexTest, AScanIndexFolderOthersCanWriteIsRefused) {
  fs::create_directories(cache_);
  ::chmod(cache_.c_str(), 0700);
  ScanIndex first = ScanIndex::open(cache_, {tree_});
  ASSERT_EQ(first.save(scan_with(first)), "");
  ::chmod((cache_ / "scan-index").c_str(), 0777);
  ScanIndex planted = ScanIndex::open(cache_, {tree_});
  EXPECT_NE(planted.problem().find("scan-index"), std::string::npos) << planted.problem();
  EXPECT_NE(planted.problem().find("writable by others"), std::string::npos) << planted.problem();
  EXPECT_EQ(planted.size(), 0u);
  const TreeScan scan = scan_with(planted);
  EXPECT_EQ(scan.reused, 0u);
  EXPECT_NE(planted.save(scan), "") << "nothing is written there either";
}

namespace {

// A blue/green deployment: `current` is a link to one of two trees, each a
// folder with a library of its own name and content, replaced atomically
// (a new link renamed over the old one).
struct BlueGreen {
  fs::path top, blue, green, current;
  BlueGreen(const fs::path& at, const fs::path& fixtures) : top(at) {
    blue = top / "blue";
    green = top / "green";
    current = top / "current";
    fs::create_directories(blue);
    fs::create_directories(green);
    fs::copy_file(fixtures / "sm_86_sm_89.so", blue / "libblue.so");
    fs::copy_file(fixtures / "compute_90.so", green / "libgreen.so");
    fs::create_directory_symlink(blue, current);
  }
  void point_at(const fs::path& target) const {
    const fs::path next = top / "current.next";
    fs::remove(next);
    fs::create_directory_symlink(target, next);
    fs::rename(next, current);
  }
};

std::vector<std::string> paths_and_images(const TreeScan& scan) {
  std::vector<std::string> out;
  for (const auto& file : scan.files)
    out.push_back(file.path + " " + std::to_string(file.images.size()) +
                  (file.unreadable ? " unreadable" : ""));
  return out;
}

}  // namespace

// Found in issue 34: a link flipped while a check walked was served stale
// for three runs ("fits" while --no-index said "fails"): the listing of the
// tree it led to was kept under the stamp of the one it had led to. The
// link flips here between the walk's stat and the listing; every later
// scan, from the index or not, must see what is there.
TEST_F(ScanIndexTest, ALinkFlippedDuringTheWalkIsNeverServedStale) {
  const BlueGreen site(top_ / "site", fixtures_);
  let_changes_settle();
  archfit::binary::TreeScanOptions flipping;
  ScanIndex first = ScanIndex::open(cache_, {site.current});
  flipping.reuse = [&](const std::string& path, const FileStamp& stamp,
                       const std::string& real_path) { return first.take(path, stamp, real_path); };
  flipping.reuse_listing = [&](const std::string& dir, const FileStamp& stamp) {
    return first.listing(dir, stamp);
  };
  bool flipped = false;
  flipping.on_progress = [&](const archfit::binary::ScanProgress& progress) {
    if (progress.walking && progress.last == site.current.string() && !flipped) {
      site.point_at(site.green);  // after the stat of `current`, before its listing
      flipped = true;
    }
  };
  const TreeScan during = archfit::binary::scan_tree({site.current}, flipping);
  ASSERT_TRUE(flipped);
  ASSERT_EQ(first.save(during), "");

  // Back to blue, as a roll-back would: the index must not answer with green's names.
  site.point_at(site.blue);
  for (int run = 0; run < 3; ++run) {
    ScanIndex index = ScanIndex::open(cache_, {site.current});
    const TreeScan from_index = archfit::binary::scan_tree(
        {site.current},
        {.reuse = [&](const std::string& path, const FileStamp& stamp,
                      const std::string& real_path) { return index.take(path, stamp, real_path); },
         .reuse_listing = [&](const std::string& dir,
                              const FileStamp& stamp) { return index.listing(dir, stamp); }});
    const TreeScan fresh = archfit::binary::scan_tree({site.current});
    EXPECT_EQ(paths_and_images(from_index), paths_and_images(fresh)) << "run " << run;
    ASSERT_EQ(fresh.files.size(), 1u);
    EXPECT_EQ(fresh.files[0].path, (site.current / "libblue.so").string());
    ASSERT_EQ(index.save(from_index), "");
  }
}

// The same for a link to a file flipped between the walk's stat and the
// read: what was read is kept under the file actually opened, so flipping
// back never serves the other file's images.
TEST_F(ScanIndexTest, AFileLinkFlippedBeforeItIsReadIsKeptUnderTheFileRead) {
  const fs::path site = top_ / "files";
  fs::create_directories(site / "lib");
  fs::copy_file(fixtures_ / "sm_86_sm_89.so", site / "blue.so");
  fs::copy_file(fixtures_ / "compute_90.so", site / "green.so");
  fs::create_symlink(site / "blue.so", site / "lib" / "libop.so");
  let_changes_settle();
  const auto point_at = [&](const fs::path& target) {
    fs::remove(site / "lib" / "next");
    fs::create_symlink(target, site / "lib" / "next");
    fs::rename(site / "lib" / "next", site / "lib" / "libop.so");
  };
  ScanIndex first = ScanIndex::open(cache_, {site / "lib"});
  archfit::binary::TreeScanOptions flipping;
  flipping.reuse = [&](const std::string& path, const FileStamp& stamp,
                       const std::string& real_path) {
    point_at(site / "green.so");  // the walk stat'ed blue; the read opens green
    return first.take(path, stamp, real_path);
  };
  const TreeScan during = archfit::binary::scan_tree({site / "lib"}, flipping);
  ASSERT_EQ(during.files.size(), 1u);
  EXPECT_EQ(during.real_paths[0], (site / "green.so").string());
  ASSERT_EQ(first.save(during), "");

  point_at(site / "blue.so");
  let_changes_settle();
  ScanIndex second = ScanIndex::open(cache_, {site / "lib"});
  const TreeScan after = scan_with_root(second, site / "lib");
  const TreeScan fresh = archfit::binary::scan_tree({site / "lib"});
  EXPECT_EQ(after.reused, 0u) << "green's scan must not be served for blue";
  EXPECT_EQ(paths_and_images(after), paths_and_images(fresh));
}
