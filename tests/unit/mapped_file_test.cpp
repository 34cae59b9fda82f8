// The platform seam for reading files (issue 32): what the scanner gets for
// a regular file, an empty one, a FIFO and a path that is not there.
#include "sys/mapped_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using archfit::sys::MappedFile;

class MappedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("archfit_mapped_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(MappedFileTest, ARegularFileIsItsBytesAndOthersSayWhatTheyAre) {
  std::ofstream(dir_ / "data", std::ios::binary) << "fatbin?";
  MappedFile file = MappedFile::open(dir_ / "data");
  ASSERT_EQ(file.kind(), MappedFile::Kind::mapped);
  const auto bytes = file.bytes();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()), "fatbin?");
  // Moved, the mapping goes with it and is released once.
  MappedFile moved = std::move(file);
  EXPECT_EQ(moved.bytes().size(), 7u);

  std::ofstream(dir_ / "empty").close();
  EXPECT_EQ(MappedFile::open(dir_ / "empty").kind(), MappedFile::Kind::empty);

#ifndef _WIN32  // no FIFOs in a Windows folder
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(MappedFile::open(dir_ / "fifo").kind(), MappedFile::Kind::special);  // no wait
#endif

  const MappedFile missing = MappedFile::open(dir_ / "missing");
  EXPECT_EQ(missing.kind(), MappedFile::Kind::failed);
  EXPECT_EQ(missing.problem().rfind("cannot open: ", 0), 0u) << missing.problem();
  EXPECT_TRUE(missing.bytes().empty());
}

}  // namespace
