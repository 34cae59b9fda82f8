// sys/read_file.hpp: the one whole-file reader (issue 25) — a file of the size
// stat says, a /proc file stat calls empty, and every way it can fail, each
// named with its path.
#include "sys/read_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

class SysReadFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("archfit_read_file_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& bytes) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  fs::path dir_;
};

TEST_F(SysReadFile, ReadsEveryByteIncludingNulsAndAnEmptyFile) {
  const std::string bytes("Metadata-Version: 2.1\n\0\xff tail", 28);
  EXPECT_EQ(archfit::sys::read_file(write("METADATA", bytes)), bytes);
  EXPECT_EQ(archfit::sys::read_file(write("empty", "")), std::string());
}

#ifndef _WIN32  // Linux's /proc
TEST_F(SysReadFile, AProcFileThatStatCallsEmptyIsReadToItsEnd) {
  const auto status = archfit::sys::read_file("/proc/self/status");
  ASSERT_TRUE(status);
  EXPECT_NE(status->find("Pid:"), std::string::npos);
  EXPECT_GT(status->size(), 100u);
}
#endif

TEST_F(SysReadFile, FailuresSayWhatAndWhere) {
  std::string problem;
  EXPECT_FALSE(archfit::sys::read_file(dir_ / "missing", &problem));
  EXPECT_NE(problem.find("cannot read " + (dir_ / "missing").string()), std::string::npos)
      << problem;
  EXPECT_NE(problem.find("No such file"), std::string::npos) << problem;

  EXPECT_FALSE(archfit::sys::read_file(dir_, &problem));
#ifdef _WIN32  // a folder cannot be opened as a file there
  EXPECT_NE(problem.find("cannot read " + dir_.string()), std::string::npos) << problem;
#else
  EXPECT_NE(problem.find("Is a directory"), std::string::npos) << problem;
#endif

  const fs::path big = write("RECORD", std::string(5000, 'x'));
  EXPECT_FALSE(archfit::sys::read_file(big, &problem, 4096));
  EXPECT_EQ(problem, big.string() + " is 5000 bytes; not read (limit 4096)");
  EXPECT_TRUE(archfit::sys::read_file(big, &problem, 5000));

#ifndef _WIN32  // a file stat calls empty: Linux's /proc
  EXPECT_FALSE(archfit::sys::read_file("/proc/self/status", &problem, 10));
  EXPECT_NE(problem.find("over 10 bytes"), std::string::npos) << problem;
#endif
}

}  // namespace
