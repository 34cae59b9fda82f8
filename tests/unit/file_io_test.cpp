// The platform seam for the store's files (sys/file_io): a file written
// whole through a temporary one and a rename, and a file read without
// following a link at its path.
#include "sys/file_io.hpp"
#include "sys/file_status.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using archfit::sys::NoFollowFile;

std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span<const char>(text.data(), text.size()));
}

std::string contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("archfit_file_io_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(FileIoTest, TheTargetAppearsWholeOwnerOnlyAndTheTemporaryFileIsGone) {
  const fs::path temp = archfit::sys::unique_temporary_path(dir_, "entry");
  const fs::path target = dir_ / "entry.bin";
  ASSERT_EQ(archfit::sys::write_then_replace(temp, target, {bytes_of("head:"), bytes_of("body")}),
            "");
  EXPECT_EQ(contents(target), "head:body");
  EXPECT_FALSE(fs::exists(fs::symlink_status(temp)));
  struct stat info {};
  ASSERT_EQ(::lstat(target.c_str(), &info), 0);
  EXPECT_TRUE(S_ISREG(info.st_mode));
  EXPECT_EQ(info.st_mode & 07777, 0600u);
}

TEST_F(FileIoTest, AnExistingTargetIsReplaced) {
  const fs::path target = dir_ / "entry.bin";
  std::ofstream(target, std::ios::binary) << "an older and longer entry";
  // Open before the replace: a reader of the old file keeps the old bytes.
  std::ifstream old_reader(target, std::ios::binary);
  ASSERT_EQ(archfit::sys::write_then_replace(archfit::sys::unique_temporary_path(dir_, "entry"),
                                             target, {bytes_of("new")}),
            "");
  EXPECT_EQ(contents(target), "new");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(old_reader), {}),
            "an older and longer entry");
}

TEST_F(FileIoTest, TemporaryNamesAreUniqueAndNamedForTheStem) {
  const fs::path first = archfit::sys::unique_temporary_path(dir_, "abc");
  const fs::path second = archfit::sys::unique_temporary_path(dir_, "abc");
  EXPECT_NE(first, second);
  EXPECT_EQ(first.parent_path(), dir_);
  const std::string name = first.filename().string();
  EXPECT_EQ(name.rfind("abc." + std::to_string(::getpid()) + ".", 0), 0u) << name;
  EXPECT_TRUE(name.ends_with(".tmp")) << name;
}

TEST_F(FileIoTest, ATemporaryNameTakenAlreadyIsRefusedAndNotWrittenThrough) {
  const fs::path target = dir_ / "entry.bin";
  // A file there already: neither truncated nor renamed into place.
  const fs::path taken = dir_ / "entry.taken.tmp";
  std::ofstream(taken) << "someone else's";
  std::string error = archfit::sys::write_then_replace(taken, target, {bytes_of("mine")});
  EXPECT_EQ(error, "cannot create " + taken.string() + ": " + std::strerror(EEXIST));
  EXPECT_EQ(contents(taken), "someone else's");
  EXPECT_FALSE(fs::exists(fs::symlink_status(target)));

  // A link there, even a dangling one: the file it names is never made.
  const fs::path link = dir_ / "entry.link.tmp";
  const fs::path planted = dir_ / "planted";
  fs::create_symlink(planted, link);
  error = archfit::sys::write_then_replace(link, target, {bytes_of("mine")});
  EXPECT_EQ(error.rfind("cannot create " + link.string() + ": ", 0), 0u) << error;
  EXPECT_FALSE(fs::exists(fs::symlink_status(planted)));
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_FALSE(fs::exists(fs::symlink_status(target)));
}

TEST_F(FileIoTest, AFailedRenameNamesTheTargetAndRemovesTheTemporaryFile) {
  // A non-empty directory at the target cannot be renamed over.
  const fs::path target = dir_ / "entry.bin";
  fs::create_directories(target / "inside");
  const fs::path temp = archfit::sys::unique_temporary_path(dir_, "entry");
  const std::string error = archfit::sys::write_then_replace(temp, target, {bytes_of("x")});
  EXPECT_EQ(error.rfind("cannot write " + target.string() + ": ", 0), 0u) << error;
  EXPECT_FALSE(fs::exists(fs::symlink_status(temp)));
  EXPECT_TRUE(fs::is_directory(target / "inside"));
}

TEST_F(FileIoTest, ARegularFileIsReadAtAnyOffsetAndTouched) {
  const fs::path path = dir_ / "entry.bin";
  std::ofstream(path, std::ios::binary) << "0123456789";
  fs::last_write_time(path, fs::last_write_time(path) - std::chrono::hours(48));
  const auto before = fs::last_write_time(path);

  const NoFollowFile file = NoFollowFile::open(path);
  ASSERT_EQ(file.kind(), NoFollowFile::Kind::opened) << file.problem();
  EXPECT_EQ(file.size(), 10u);
  // The stamp is the open file's: the one a stat of its path gives.
  const auto status = archfit::sys::file_status(path, archfit::sys::Links::follow);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(file.stamp(), status->stamp);
  std::vector<std::byte> part(4);
  std::string problem;
  ASSERT_TRUE(file.read_at(part, 3, &problem)) << problem;
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(part.data()), part.size()), "3456");
  // Past the end: refused, not a short read.
  EXPECT_FALSE(file.read_at(part, 8, &problem));

  file.touch();
  EXPECT_GT(fs::last_write_time(path), before + std::chrono::hours(47));
}

TEST_F(FileIoTest, ALinkAtThePathIsNotFollowed) {
  const fs::path real = dir_ / "real.bin";
  std::ofstream(real) << "entry";
  const fs::path link = dir_ / "link.bin";
  fs::create_symlink(real, link);
  const NoFollowFile file = NoFollowFile::open(link);
  EXPECT_EQ(file.kind(), NoFollowFile::Kind::link);
  EXPECT_EQ(file.problem(), "");
  std::string problem;
  std::vector<std::byte> part(1);
  EXPECT_FALSE(file.read_at(part, 0, &problem));  // nothing was opened
}

TEST_F(FileIoTest, MissingNotRegularAndUnopenableSayWhichTheyAre) {
  EXPECT_EQ(NoFollowFile::open(dir_ / "missing").kind(), NoFollowFile::Kind::missing);
  EXPECT_EQ(NoFollowFile::open(dir_).kind(), NoFollowFile::Kind::not_regular);
  // Any other reason to fail is the OS's, as it says it (as root too).
  std::ofstream(dir_ / "file") << "x";
  const NoFollowFile file = NoFollowFile::open(dir_ / "file" / "below");
  EXPECT_EQ(file.kind(), NoFollowFile::Kind::failed);
  EXPECT_EQ(file.problem(), std::strerror(ENOTDIR));
}

TEST(FileSizeLimit, IsTheSoftLimitOrNone) {
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  EXPECT_EQ(archfit::sys::file_size_limit(), saved.rlim_cur == RLIM_INFINITY
                                                 ? std::nullopt
                                                 : std::optional<uint64_t>(saved.rlim_cur));
  // A soft limit below the hard one can be set and taken back.
  struct rlimit lowered = saved;
  lowered.rlim_cur = 4096;
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < 4096) GTEST_SKIP() << "hard limit";
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &lowered), 0);
  const auto seen = archfit::sys::file_size_limit();
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
  EXPECT_EQ(seen, std::optional<uint64_t>(4096));
}

}  // namespace
