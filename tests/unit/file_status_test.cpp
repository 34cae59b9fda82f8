// sys/file_status.hpp: what a path is, with and without following a link,
// why it cannot be asked about, its real path, and whether two paths name
// one file — the questions the tree walk, the cache and NVRTC discovery ask
// of the OS through one seam.
#include "sys/file_status.hpp"
#include "made_links.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using archfit::sys::file_status;
using archfit::sys::FileType;
using archfit::sys::Links;
using archfit::sys::StatusFailure;

namespace {

class FileStatusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("archfit_file_status_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    dir_ = fs::canonical(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

using archfit::testing::kNoLinks;
using archfit::testing::made_links;

TEST_F(FileStatusTest, AFileADirectoryAndALinkAreToldApart) {
  const fs::path file = dir_ / "lib.so";
  std::ofstream(file, std::ios::binary) << "0123456789";
  const fs::path link = dir_ / "lib.so.1";
  if (!made_links([&] { fs::create_symlink(file, link); })) GTEST_SKIP() << kNoLinks;

  const auto as_file = file_status(file, Links::follow);
  ASSERT_TRUE(as_file.has_value());
  EXPECT_EQ(as_file->type, FileType::file);
  EXPECT_EQ(as_file->stamp.size, 10u);
  EXPECT_NE(as_file->stamp.inode, 0u);

  const auto link_itself = file_status(link, Links::not_followed);
  ASSERT_TRUE(link_itself.has_value());
  EXPECT_EQ(link_itself->type, FileType::link);
  const auto through_link = file_status(link, Links::follow);
  ASSERT_TRUE(through_link.has_value());
  EXPECT_EQ(through_link->type, FileType::file);
  EXPECT_EQ(through_link->stamp, as_file->stamp);

  const auto folder = file_status(dir_, Links::follow);
  ASSERT_TRUE(folder.has_value());
  EXPECT_EQ(folder->type, FileType::directory);
}

TEST_F(FileStatusTest, AMissingPathAndATooLongOneSayWhy) {
  StatusFailure missing;
  EXPECT_FALSE(file_status(dir_ / "absent.so", Links::follow, &missing).has_value());
  EXPECT_TRUE(missing.missing);
  EXPECT_FALSE(missing.name_too_long);
  EXPECT_EQ(missing.reason, "No such file or directory");

  StatusFailure too_long;
  const fs::path long_path = dir_ / std::string(5000, 'x');
  EXPECT_FALSE(file_status(long_path, Links::follow, &too_long).has_value());
  EXPECT_TRUE(too_long.name_too_long);
  EXPECT_FALSE(too_long.missing);
}

TEST_F(FileStatusTest, ARealPathResolvesEveryLinkAndSameFileSeesThrough) {
  fs::create_directories(dir_ / "real");
  const fs::path file = dir_ / "real" / "libcudart.so.12";
  std::ofstream(file) << "x";
  if (!made_links([&] {
        fs::create_directory_symlink(dir_ / "real", dir_ / "alias");
        fs::create_symlink("libcudart.so.12", dir_ / "real" / "libcudart.so");
      })) {
    GTEST_SKIP() << kNoLinks;
  }

  EXPECT_EQ(archfit::sys::real_path((dir_ / "alias" / "libcudart.so").string()), file.string());
  EXPECT_EQ(archfit::sys::real_path((dir_ / "alias" / "none.so").string()), "");
  EXPECT_TRUE(archfit::sys::same_file(dir_ / "alias" / "libcudart.so", file));

  const fs::path copy = dir_ / "real" / "copy.so";
  fs::copy_file(file, copy);
  EXPECT_FALSE(archfit::sys::same_file(copy, file));
  EXPECT_FALSE(archfit::sys::same_file(dir_ / "absent", file));
}

}  // namespace
