#include "compat/driver.hpp"

#include <gtest/gtest.h>

#include "compat/compat_error.hpp"

namespace {

using archfit::compat::check_driver_for_cuda_major;
using archfit::compat::CompatError;
using archfit::compat::minor_version_floor;
using archfit::compat::parse_driver_version;

TEST(CompatDriver, ParsesLinuxDriverReleases) {
  const auto driver = parse_driver_version("570.86.16");
  EXPECT_EQ(driver.major, 570u);
  EXPECT_EQ(driver.minor, 86u);
  EXPECT_EQ(driver.patch, 16u);
  EXPECT_EQ(driver.text, "570.86.16");
  const auto leading_zero = parse_driver_version("580.65.06");
  EXPECT_EQ(leading_zero.patch, 6u);
  EXPECT_EQ(leading_zero.to_string(), "580.65.06");
  const auto branch = parse_driver_version("575");
  EXPECT_EQ(branch.major, 575u);
  EXPECT_EQ(branch.minor, 0u);
}

TEST(CompatDriver, RejectsTextThatIsNotARelease) {
  for (const char* text : {"", "570.", ".86", "570..16", "570.86.16.1", "r570", "570.86a",
                           "1234567", "570 86", "-570"}) {
    SCOPED_TRACE(text);
    EXPECT_THROW(parse_driver_version(text), CompatError);
  }
}

TEST(CompatDriver, ComparesReleasesNumerically) {
  EXPECT_EQ(parse_driver_version("580.65.06"), parse_driver_version("580.65.6"));
  EXPECT_LT(parse_driver_version("570.86.16"), parse_driver_version("575.51.03"));
  EXPECT_LT(parse_driver_version("570.9"), parse_driver_version("570.86"));
  EXPECT_GT(parse_driver_version("1000.1"), parse_driver_version("999.99.99"));
}

TEST(CompatDriver, MinorVersionFloorsFollowNvidiasTable) {
  // reference/cuda-binaries.md §4: 13.x ≥ 580, 12.x ≥ 525, 11.x ≥ 450.
  EXPECT_EQ(minor_version_floor(11), 450u);
  EXPECT_EQ(minor_version_floor(12), 525u);
  EXPECT_EQ(minor_version_floor(13), 580u);
  // CUDA 10 had a floor per minor release; a future major is not known yet.
  EXPECT_FALSE(minor_version_floor(10));
  EXPECT_FALSE(minor_version_floor(14));
}

TEST(CompatDriver, A570DriverRunsCuda12ApplicationsButNotCuda13) {
  const auto driver = parse_driver_version("570.86.16");
  const auto cuda12 = check_driver_for_cuda_major(driver, 12);
  ASSERT_TRUE(cuda12);
  EXPECT_TRUE(cuda12->supported);
  EXPECT_EQ(cuda12->floor, 525u);
  const auto cuda13 = check_driver_for_cuda_major(driver, 13);
  ASSERT_TRUE(cuda13);
  EXPECT_FALSE(cuda13->supported);
  EXPECT_EQ(cuda13->floor, 580u);
  EXPECT_NE(cuda13->explanation.find("570.86.16"), std::string::npos) << cuda13->explanation;
  EXPECT_NE(cuda13->explanation.find("580"), std::string::npos) << cuda13->explanation;
  EXPECT_FALSE(check_driver_for_cuda_major(driver, 10));
}

TEST(CompatDriver, FloorIsTheBranchNotTheFullRelease) {
  // 525.60.13 is the CUDA 12.0 GA driver; any 525 release runs 12.x.
  EXPECT_TRUE(check_driver_for_cuda_major(parse_driver_version("525.60.13"), 12)->supported);
  EXPECT_TRUE(check_driver_for_cuda_major(parse_driver_version("525.0"), 12)->supported);
  EXPECT_FALSE(check_driver_for_cuda_major(parse_driver_version("520.61.05"), 12)->supported);
  EXPECT_TRUE(check_driver_for_cuda_major(parse_driver_version("450.80.02"), 11)->supported);
  EXPECT_FALSE(check_driver_for_cuda_major(parse_driver_version("418.87"), 11)->supported);
  EXPECT_TRUE(check_driver_for_cuda_major(parse_driver_version("580.65.06"), 13)->supported);
}

}  // namespace
