// The platform seam for the tree walk (sys/directory_listing): one
// directory's entries with their names, types as the listing tells them and
// file ids, and the reason when a directory cannot be listed.
#include "sys/directory_listing.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace {

namespace fs = std::filesystem;
using archfit::sys::DirectoryListing;
using Type = DirectoryListing::Type;

class DirectoryListingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("archfit_listing_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

struct Seen {
  Type type;
  uint64_t file_id;
};

std::map<std::string, Seen> list(const fs::path& dir, std::string* problem = nullptr) {
  std::map<std::string, Seen> seen;
  DirectoryListing listing = DirectoryListing::open(dir);
  while (const auto entry = listing.next()) {
    EXPECT_TRUE(seen.emplace(std::string(entry->name), Seen{entry->type, entry->file_id}).second)
        << entry->name << " listed twice";
  }
  if (problem) *problem = listing.problem();
  return seen;
}

uint64_t inode_of(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
  return static_cast<uint64_t>(info.st_ino);
}

TEST_F(DirectoryListingTest, NamesTypesAndFileIdsOfAFileAFolderAndALink) {
  std::ofstream(dir_ / "libtorch_cuda.so") << "ELF";
  fs::create_directory(dir_ / "lib");
  fs::create_symlink("libtorch_cuda.so", dir_ / "libtorch_cuda.so.2");
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);

  std::string problem = "unset";
  const auto seen = list(dir_, &problem);
  EXPECT_EQ(problem, "");
  ASSERT_EQ(seen.size(), 4u);  // no "." or ".."
  ASSERT_TRUE(seen.contains("libtorch_cuda.so"));
  ASSERT_TRUE(seen.contains("lib"));
  ASSERT_TRUE(seen.contains("libtorch_cuda.so.2"));
  ASSERT_TRUE(seen.contains("fifo"));
  // A file system that does not fill d_type says unknown for all; the ones
  // tests run on (ext4, xfs, btrfs, tmpfs, overlayfs) do.
  if (seen.at("lib").type != Type::unknown) {
    EXPECT_EQ(seen.at("libtorch_cuda.so").type, Type::file);
    EXPECT_EQ(seen.at("lib").type, Type::directory);
    EXPECT_EQ(seen.at("libtorch_cuda.so.2").type, Type::link);  // the link, not what it names
    EXPECT_EQ(seen.at("fifo").type, Type::other);
  }
  for (const auto& [name, entry] : seen) {
    EXPECT_EQ(entry.file_id, inode_of(dir_ / name)) << name;
  }
  EXPECT_NE(seen.at("libtorch_cuda.so").file_id, seen.at("libtorch_cuda.so.2").file_id);
}

TEST_F(DirectoryListingTest, AnEmptyFolderListsNothingAndTheEndStaysTheEnd) {
  DirectoryListing listing = DirectoryListing::open(dir_);
  ASSERT_TRUE(listing.is_open()) << listing.problem();
  EXPECT_FALSE(listing.next().has_value());
  EXPECT_FALSE(listing.next().has_value());
  EXPECT_EQ(listing.problem(), "");
  // Moved, the open directory goes with it and is closed once.
  DirectoryListing moved = std::move(listing);
  EXPECT_TRUE(moved.is_open());
  EXPECT_FALSE(listing.is_open());  // NOLINT(bugprone-use-after-move): what a move leaves
}

TEST_F(DirectoryListingTest, AMissingFolderOrAFileSaysWhyItCannotBeListed) {
  DirectoryListing missing = DirectoryListing::open(dir_ / "missing");
  EXPECT_FALSE(missing.is_open());
  EXPECT_EQ(missing.problem(), std::strerror(ENOENT));
  EXPECT_FALSE(missing.next().has_value());
  EXPECT_EQ(missing.problem(), std::strerror(ENOENT));  // kept after next()

  std::ofstream(dir_ / "file") << "x";
  const DirectoryListing file = DirectoryListing::open(dir_ / "file");
  EXPECT_FALSE(file.is_open());
  EXPECT_EQ(file.problem(), std::strerror(ENOTDIR));
}

TEST_F(DirectoryListingTest, ALinkToAFolderIsListedThroughWhenNamedItself) {
  // Opening follows a link named as the directory (the walk decides before
  // it lists whether to follow one).
  fs::create_directory(dir_ / "real");
  std::ofstream(dir_ / "real" / "inside.so") << "ELF";
  fs::create_directory_symlink(dir_ / "real", dir_ / "alias");
  const auto seen = list(dir_ / "alias");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen.begin()->first, "inside.so");
  EXPECT_EQ(seen.begin()->second.file_id, inode_of(dir_ / "real" / "inside.so"));
}

}  // namespace
