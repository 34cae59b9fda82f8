// Scanning wheels without installing them: binary/zip_archive, archive_scan
// and scan_tree's handling of named .whl files.
#include "binary/archive_scan.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "binary/tree_scan.hpp"
#include "wheel_builder.hpp"

namespace fs = std::filesystem;
using archfit::binary::FileScan;
using archfit::binary::scan_tree;
using archfit::binary::ZipArchive;
using archfit::binary::ZipError;
using archfit::test::file_content;
using archfit::test::write_zip;

namespace {

class ArchiveScan : public ::testing::Test {
 protected:
  void SetUp() override {
    fixtures_ = ARCHFIT_FIXTURE_DIR;
    if (!fs::exists(fixtures_ / "sm_86_sm_89.so") || !fs::exists(fixtures_ / "compute_90.so"))
      GTEST_SKIP() << "nvcc fixtures are not built in " << fixtures_;
    dir_ = fs::temp_directory_path() /
           ("archfit_archive_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A wheel with two nvcc-built extensions, a Python file and a dist-info.
  fs::path make_wheel(bool stored = false) {
    const fs::path wheel = dir_ / "fastops-1.0-cp311-cp311-linux_x86_64.whl";
    write_zip(wheel, {{"fastops/_C.so", file_content(fixtures_ / "sm_86_sm_89.so"), stored},
                      {"fastops/jit.so.1", file_content(fixtures_ / "compute_90.so"), stored},
                      {"fastops/__init__.py", "from ._C import *\n"},
                      {"fastops-1.0.dist-info/METADATA", "Name: fastops\nVersion: 1.0\n"}});
    return wheel;
  }

  static std::set<std::string> arch_names(const FileScan& scan) {
    std::set<std::string> names;
    for (const auto& image : scan.images) names.insert(image.arch_name());
    return names;
  }

  fs::path fixtures_, dir_;
};

const FileScan* find(const std::vector<FileScan>& files, const std::string& path) {
  for (const auto& file : files)
    if (file.path == path) return &file;
  return nullptr;
}

}  // namespace

TEST_F(ArchiveScan, AWheelsLibrariesGiveTheSameImagesAsTheFilesThemselves) {
  const fs::path wheel = make_wheel();
  const auto result = scan_tree({wheel});
  ASSERT_EQ(result.files.size(), 2u) << "only the two libraries are device-code candidates";
  const FileScan* c = find(result.files, wheel.string() + "!/fastops/_C.so");
  const FileScan* jit = find(result.files, wheel.string() + "!/fastops/jit.so.1");
  ASSERT_TRUE(c && jit);
  const FileScan direct = scan_tree({fixtures_ / "sm_86_sm_89.so"}).files.at(0);
  EXPECT_EQ(c->images.size(), direct.images.size());
  EXPECT_EQ(arch_names(*c), arch_names(direct));
  EXPECT_EQ(arch_names(*c), (std::set<std::string>{"sm_86", "sm_89"}));
  EXPECT_EQ(arch_names(*jit), (std::set<std::string>{"compute_90"}));
  EXPECT_EQ(c->file_size, fs::file_size(fixtures_ / "sm_86_sm_89.so"));
  EXPECT_TRUE(c->ok() && jit->ok());
}

TEST_F(ArchiveScan, AWheelInsideAWalkedTreeIsNotOpened) {
  make_wheel();
  const auto result = scan_tree({dir_});
  ASSERT_EQ(result.files.size(), 1u);
  EXPECT_FALSE(result.files[0].has_device_code());
  EXPECT_EQ(result.files[0].path.find("!/"), std::string::npos);
}

TEST_F(ArchiveScan, AFileNamedWhlThatIsNotAZipIsAProblemNotACrash) {
  const fs::path fake = dir_ / "broken-1.0-py3-none-any.whl";
  std::ofstream(fake) << "this is not a zip archive";
  const auto result = scan_tree({fake, fixtures_ / "compute_90.so"});
  ASSERT_EQ(result.files.size(), 2u);
  const FileScan* broken = find(result.files, fake.string());
  ASSERT_TRUE(broken);
  ASSERT_FALSE(broken->problems.empty());
  EXPECT_NE(broken->problems[0].message.find("not a readable zip archive"), std::string::npos)
      << broken->problems[0].message;
  EXPECT_TRUE(find(result.files, (fixtures_ / "compute_90.so").string())->has_device_code());
}

TEST_F(ArchiveScan, ATruncatedWheelIsAProblemNotACrash) {
  const fs::path wheel = make_wheel();
  fs::resize_file(wheel, fs::file_size(wheel) / 2);  // the central directory is gone
  const auto result = scan_tree({wheel});
  ASSERT_EQ(result.files.size(), 1u);
  EXPECT_TRUE(result.files[0].unreadable);
  EXPECT_FALSE(result.files[0].problems.empty());
}

TEST_F(ArchiveScan, ACorruptMemberNamesItselfAndTheOthersAreStillScanned) {
  const fs::path wheel = make_wheel(/*stored=*/true);
  // Flip bytes in the middle of the stored _C.so: its CRC no longer matches.
  std::string bytes = file_content(wheel);
  const std::string original = file_content(fixtures_ / "sm_86_sm_89.so");
  const size_t at = bytes.find(original.substr(original.size() / 2, 64));
  ASSERT_NE(at, std::string::npos);
  for (size_t i = 0; i < 16; ++i) bytes[at + i] = static_cast<char>(~bytes[at + i]);
  std::ofstream(wheel, std::ios::binary | std::ios::trunc) << bytes;

  const auto result = scan_tree({wheel});
  const FileScan* c = find(result.files, wheel.string() + "!/fastops/_C.so");
  const FileScan* jit = find(result.files, wheel.string() + "!/fastops/jit.so.1");
  ASSERT_TRUE(c && jit);
  ASSERT_FALSE(c->problems.empty());
  EXPECT_NE(c->problems[0].message.find("fastops/_C.so"), std::string::npos)
      << c->problems[0].message;
  EXPECT_TRUE(jit->ok());
  EXPECT_EQ(arch_names(*jit), (std::set<std::string>{"compute_90"}));
}

TEST_F(ArchiveScan, AMemberOverTheSizeLimitIsNotRead) {
  const ZipArchive archive(make_wheel());
  const auto member = archive.find("fastops/_C.so");
  ASSERT_TRUE(member);
  try {
    archive.read(*member, member->size - 1);
    FAIL() << "read past the limit";
  } catch (const ZipError& error) {
    EXPECT_NE(std::string(error.what()).find("over the limit"), std::string::npos) << error.what();
  }
  EXPECT_EQ(archive.read(*member, member->size).size, member->size);
}

// A central directory that claims more than the compressed bytes can hold
// (as tests/fuzz/regressions/wheel/ does: 2 GiB from a few KB) is refused
// before anything is allocated; the size decides no allocation on trust.
TEST_F(ArchiveScan, AMemberClaimingMoreThanItsBytesCanHoldIsRefusedUnallocated) {
  for (const bool stored : {false, true}) {
    const fs::path wheel = make_wheel(stored);
    std::string bytes = file_content(wheel);
    // The central directory entry of the first member (fastops/_C.so): its
    // uncompressed size is the 4 bytes at offset 24.
    const size_t entry = bytes.find("PK\x01\x02");
    ASSERT_NE(entry, std::string::npos);
    for (size_t i = 0; i < 4; ++i) bytes[entry + 24 + i] = i == 3 ? '\x7f' : '\xff';
    std::ofstream(wheel, std::ios::binary | std::ios::trunc) << bytes;

    const ZipArchive archive(wheel);
    const auto member = archive.find("fastops/_C.so");
    ASSERT_TRUE(member);
    ASSERT_EQ(member->size, 0x7fffffffu);
    try {
      archive.read(*member, archfit::binary::kMaxMemberBytes);
      FAIL() << "read a member whose size is a lie";
    } catch (const ZipError& error) {
      EXPECT_NE(std::string(error.what()).find("claims 2147483647 bytes uncompressed from"),
                std::string::npos)
          << error.what();
      EXPECT_NE(std::string(error.what()).find("more than they can hold"), std::string::npos);
    }
  }
}

// Nor may its compressed size claim more than the archive holds (3.7 GB in
// 4 KB: tests/fuzz/regressions/wheel/claims_3_7_gb_compressed_in_4_kb.whl):
// members that cannot lie side by side in the file are refused whole.
TEST_F(ArchiveScan, AMemberClaimingMoreCompressedBytesThanTheArchiveIsRefusedUnallocated) {
  const fs::path wheel = make_wheel();
  std::string bytes = file_content(wheel);
  const size_t entry = bytes.find("PK\x01\x02");
  ASSERT_NE(entry, std::string::npos);
  // Compressed size at offset 20, uncompressed at 24: both 0x7fffffff.
  for (const size_t field : {size_t{20}, size_t{24}})
    for (size_t i = 0; i < 4; ++i) bytes[entry + field + i] = i == 3 ? '\x7f' : '\xff';
  std::ofstream(wheel, std::ios::binary | std::ios::trunc) << bytes;
  try {
    const ZipArchive archive(wheel);
    FAIL() << "opened an archive whose compressed sizes are a lie";
  } catch (const ZipError& error) {
    EXPECT_NE(std::string(error.what()).find("cannot lie side by side"), std::string::npos)
        << error.what();
  }
}

// Issue 24 row 3: a wheel whose entries all share one deflate stream (each
// promises 1 MiB here; 300 × 1 GiB from 1 MB took minutes and 2.1 GB) is
// refused whole, before any member is decompressed.
TEST_F(ArchiveScan, AWheelWhoseMembersShareOneStreamIsRefusedWhole) {
  const fs::path wheel = dir_ / "bomb-1.0-py3-none-any.whl";
  std::vector<std::string> names;
  for (int i = 0; i < 64; ++i) names.push_back("bomb/lib" + std::to_string(i) + ".so");
  archfit::test::write_overlapping_zip(wheel, names, std::string(1 << 20, '\0'));
  ASSERT_LT(fs::file_size(wheel), 64u << 10);

  const auto result = scan_tree({wheel});
  ASSERT_EQ(result.files.size(), 1u);
  EXPECT_EQ(result.files[0].path, wheel.string());
  EXPECT_TRUE(result.files[0].unreadable);
  ASSERT_FALSE(result.files[0].problems.empty());
  const std::string message = result.files[0].problems[0].message;
  EXPECT_NE(message.find("its 64 members claim"), std::string::npos) << message;
  EXPECT_NE(message.find("overlap"), std::string::npos) << message;
  EXPECT_THROW(ZipArchive{wheel}, ZipError);
}

// Issue 24 row 4: a member that decompresses far past what the wheel's size
// warrants (2 GiB from 2 MB took 8-12 s and 2.1 GB) is not read; the wheel's
// other members still are, from what is left of its budget.
TEST_F(ArchiveScan, AMemberPastTheWheelsDecompressionBudgetIsNotRead) {
  const fs::path wheel = dir_ / "fastops-1.0-cp311-cp311-linux_x86_64.whl";
  write_zip(wheel, {{"fastops/_C.so", file_content(fixtures_ / "sm_86_sm_89.so")},
                    {"fastops/_bomb.so", std::string(32u << 20, '\0')}});
  archfit::binary::TreeScanOptions options;
  options.archive_limits.floor_bytes = 0;  // the ratio alone decides, as for a large wheel
  const uint64_t budget = options.archive_limits.budget_for(fs::file_size(wheel));
  ASSERT_LT(budget, 32u << 20);
  ASSERT_GT(budget, fs::file_size(fixtures_ / "sm_86_sm_89.so"));

  const auto result = scan_tree({wheel}, options);
  const FileScan* bomb = find(result.files, wheel.string() + "!/fastops/_bomb.so");
  const FileScan* c = find(result.files, wheel.string() + "!/fastops/_C.so");
  ASSERT_TRUE(bomb && c);
  EXPECT_TRUE(bomb->unreadable);
  ASSERT_FALSE(bomb->problems.empty());
  const std::string message = bomb->problems[0].message;
  EXPECT_NE(message.find("fastops/_bomb.so: not read: its 33554432 bytes uncompressed would take "
                         "the archive past its decompression budget of " +
                         std::to_string(budget) + " bytes (32 ×"),
            std::string::npos)
      << message;
  EXPECT_TRUE(c->ok());
  EXPECT_EQ(arch_names(*c), (std::set<std::string>{"sm_86", "sm_89"}));
}

// However small the ratio, the absolute cap holds; a budget spent by one
// member leaves nothing for the next, and nothing is taken by a refusal.
TEST_F(ArchiveScan, TheBudgetIsTakenBeforeAMemberIsReadAndSharedByItsMembers) {
  const ZipArchive archive(make_wheel());
  const auto c = archive.find("fastops/_C.so");
  const auto jit = archive.find("fastops/jit.so.1");
  ASSERT_TRUE(c && jit);
  archfit::binary::ArchiveLimits limits;
  limits.max_bytes = c->size + jit->size - 1;
  archfit::binary::DecompressionBudget budget(archive.file_bytes(), limits);
  ASSERT_EQ(budget.limit(), limits.max_bytes);
  EXPECT_EQ(archive.read(*c, archfit::binary::kMaxMemberBytes, {}, &budget).size, c->size);
  EXPECT_EQ(budget.left(), jit->size - 1);
  try {
    archive.read(*jit, archfit::binary::kMaxMemberBytes, {}, &budget);
    FAIL() << "read past the budget";
  } catch (const ZipError& error) {
    EXPECT_NE(std::string(error.what())
                  .find("at most " + std::to_string(limits.max_bytes) + "), of which " +
                        std::to_string(jit->size - 1) + " are left"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(budget.left(), jit->size - 1);
}

TEST(ArchiveLimits, TheBudgetIsTheRatioWithinTheFloorAndTheCap) {
  archfit::binary::ArchiveLimits limits;
  limits.max_ratio = 32;
  limits.floor_bytes = 64u << 20;
  limits.max_bytes = 8ull << 30;
  EXPECT_EQ(limits.budget_for(2'087'765), 64u << 20);  // a small wheel: the floor
  EXPECT_EQ(limits.budget_for(100'000'000), 3'200'000'000u);
  EXPECT_EQ(limits.budget_for(900'000'000), 8ull << 30);  // torch-sized: the cap
  limits.max_ratio = UINT64_MAX;
  limits.max_bytes = UINT64_MAX;
  EXPECT_EQ(limits.budget_for(3), UINT64_MAX) << "the product saturates, never wraps";
  limits.max_bytes = 1;
  EXPECT_EQ(limits.budget_for(3), 1u) << "the cap wins over the floor";
}

// A stream that goes on past the size its directory entry promises was cut
// to that size and taken as whole; it is corrupt.
TEST_F(ArchiveScan, AMemberThatDecompressesPastItsSizeIsRefused) {
  const fs::path wheel = make_wheel();
  std::string bytes = file_content(wheel);
  const size_t entry = bytes.find("PK\x01\x02");  // fastops/_C.so's
  ASSERT_NE(entry, std::string::npos);
  bytes[entry + 24] = static_cast<char>(static_cast<uint8_t>(bytes[entry + 24]) - 1);
  std::ofstream(wheel, std::ios::binary | std::ios::trunc) << bytes;
  const ZipArchive archive(wheel);
  const auto member = archive.find("fastops/_C.so");
  ASSERT_TRUE(member);
  try {
    archive.read(*member, archfit::binary::kMaxMemberBytes);
    FAIL() << "read a member that is longer than it says";
  } catch (const ZipError& error) {
    EXPECT_NE(std::string(error.what()).find("decompresses to more than the"), std::string::npos)
        << error.what();
  }
}

TEST_F(ArchiveScan, ProgressCountsEveryFileAndByteOnce) {
  const fs::path wheel = make_wheel();
  archfit::binary::TreeScanOptions options;
  options.threads = 2;
  std::vector<archfit::binary::ScanProgress> seen;
  options.on_progress = [&](const archfit::binary::ScanProgress& p) { seen.push_back(p); };
  const auto result = scan_tree({wheel, fixtures_ / "sm_80.so"}, options);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().files_done, 3u);
  EXPECT_EQ(seen.back().files_total, 3u);
  EXPECT_EQ(seen.back().bytes_done, seen.back().bytes_total);
  EXPECT_EQ(seen.back().bytes_total, result.bytes);
  for (size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GE(seen[i].bytes_done, seen[i - 1].bytes_done);
    EXPECT_GE(seen[i].files_done, seen[i - 1].files_done);
  }
}
