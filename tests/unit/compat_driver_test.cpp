#include "compat/driver.hpp"

#include <gtest/gtest.h>

#include "compat/compat_error.hpp"

namespace {

using archfit::compat::check_driver_for_cuda_major;
using archfit::compat::CompatError;
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

// NVIDIA's minor-version compatibility table gives one floor per CUDA major
// (the knowledge base holds them: ptx_isa.yaml cuda_major_floors); the rule
// here compares a driver with the floor it is given.
TEST(CompatDriver, A570DriverRunsCuda12ApplicationsButNotCuda13) {
  const auto driver = parse_driver_version("570.86.16");
  const auto cuda12 = check_driver_for_cuda_major(driver, 12, parse_driver_version("525.60.13"));
  EXPECT_TRUE(cuda12.supported);
  EXPECT_EQ(cuda12.floor.to_string(), "525.60.13");
  const auto cuda13 = check_driver_for_cuda_major(driver, 13, parse_driver_version("580.65.06"));
  EXPECT_FALSE(cuda13.supported);
  EXPECT_NE(cuda13.explanation.find("570.86.16"), std::string::npos) << cuda13.explanation;
  EXPECT_NE(cuda13.explanation.find("580.65.06"), std::string::npos) << cuda13.explanation;
  EXPECT_NE(cuda13.explanation.find("CUDA 13.x"), std::string::npos) << cuda13.explanation;
}

TEST(CompatDriver, TheFloorIsTheExactReleaseNvidiaLists) {
  const auto floor12 = parse_driver_version("525.60.13");
  EXPECT_TRUE(
      check_driver_for_cuda_major(parse_driver_version("525.60.13"), 12, floor12).supported);
  EXPECT_FALSE(
      check_driver_for_cuda_major(parse_driver_version("525.60.11"), 12, floor12).supported);
  EXPECT_FALSE(
      check_driver_for_cuda_major(parse_driver_version("520.61.05"), 12, floor12).supported);
  EXPECT_TRUE(
      check_driver_for_cuda_major(parse_driver_version("550.54.14"), 12, floor12).supported);
  const auto floor11 = parse_driver_version("450.80.02");
  EXPECT_TRUE(
      check_driver_for_cuda_major(parse_driver_version("450.80.02"), 11, floor11).supported);
  EXPECT_FALSE(check_driver_for_cuda_major(parse_driver_version("418.87"), 11, floor11).supported);
}

TEST(CompatDriver, AGpuNeedsTheFirstDriverOfItsArchitecture) {
  // An RTX 5090 (12.0, first targeted by CUDA 12.8 and its 570.26 driver).
  const auto first = parse_driver_version("570.26");
  EXPECT_FALSE(archfit::compat::driver_knows_device(parse_driver_version("550.144.03"), first));
  EXPECT_TRUE(archfit::compat::driver_knows_device(parse_driver_version("570.86.16"), first));
}

}  // namespace
