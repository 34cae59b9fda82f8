#pragma once
// The device-code fixtures tests/fixtures builds with nvcc, for tests that
// hand them to the driver; without nvcc the build makes none and the tests skip.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace archfit::testing {

inline const std::filesystem::path kFixtureDir = ARCHFIT_FIXTURE_DIR;

inline std::vector<uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Skips the test, saying why, where the build made no fixtures.
class FixtureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kFixtureDir / "fixtures.txt"))
      GTEST_SKIP() << "nvcc fixtures are not built in " << kFixtureDir;
  }
};

}  // namespace archfit::testing
