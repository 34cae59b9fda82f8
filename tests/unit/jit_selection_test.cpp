// jit/selection: prebuilt SASS, then prebuilt PTX, then NVRTC, by the rule
// table, on nvcc-built prebuilt images.
#include "jit/selection.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "binary/scanner.hpp"
#include "fixture_files.hpp"

using archfit::compat::ComputeCapability;
using archfit::jit::JitPath;
using archfit::jit::select_path;
using archfit::jit::SelectionError;
using archfit::jit::TargetPlan;

namespace {

class JitSelection : public archfit::testing::FixtureTest {
 protected:
  archfit::binary::FileScan prebuilt(const char* fixture) {
    bytes_ = archfit::testing::read_bytes(archfit::testing::kFixtureDir / fixture);
    return archfit::binary::scan_bytes(
        {reinterpret_cast<const std::byte*>(bytes_.data()), bytes_.size()}, fixture);
  }
  // NVRTC 13.0's list, as plan_target reads it.
  static TargetPlan nvrtc_13(ComputeCapability device) {
    static const std::vector<int> supported = {75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121};
    return archfit::jit::plan_target(device, supported);
  }
  std::vector<uint8_t> bytes_;
  archfit::compat::Driver driver_{};
};

}  // namespace

TEST_F(JitSelection, PrebuiltSassThatRunsIsUsedAsIs) {
  const auto selection = select_path(prebuilt("sm_86_sm_89.fatbin"), {8, 9}, driver_, true, [] {
    return nvrtc_13({8, 9});
  });
  EXPECT_EQ(selection.path, JitPath::prebuilt_sass);
  EXPECT_EQ(selection.arch, "sm_89");
  EXPECT_FALSE(selection.nvrtc_target);
}

TEST_F(JitSelection, PrebuiltPtxIsLeftToTheDriverWhenNoSassRuns) {
  const auto selection = select_path(prebuilt("compute_90.fatbin"), {12, 0}, driver_, true, [] {
    return nvrtc_13({12, 0});
  });
  EXPECT_EQ(selection.path, JitPath::driver_ptx);
  EXPECT_EQ(selection.arch, "compute_90");
}

TEST_F(JitSelection, NvrtcCompilesForTheExactArchWhenNothingPrebuiltRuns) {
  bool asked = false;
  const auto selection = select_path(prebuilt("sm_86_sm_89.fatbin"), {12, 0}, driver_, true, [&] {
    asked = true;
    return nvrtc_13({12, 0});
  });
  EXPECT_TRUE(asked);
  EXPECT_EQ(selection.path, JitPath::nvrtc);
  EXPECT_EQ(selection.arch, "sm_120");
  EXPECT_NE(selection.reason.find("No prebuilt image runs on sm_120"), std::string::npos)
      << selection.reason;
}

TEST_F(JitSelection, NvrtcIsNotAskedWhenAPrebuiltImageRuns) {
  select_path(prebuilt("sm_90a.fatbin"), {9, 0}, driver_, true, []() -> TargetPlan {
    ADD_FAILURE() << "NVRTC planned although sm_90a runs on 9.0";
    return {};
  });
}

TEST_F(JitSelection, WithoutSourceOrARunnableImageTheErrorSaysWhatToShip) {
  try {
    select_path(prebuilt("sm_80.fatbin"), {12, 0}, driver_, false, [] { return TargetPlan{}; });
    FAIL() << "selected a path";
  } catch (const SelectionError& error) {
    EXPECT_NE(std::string(error.what()).find("ship an image for sm_120"), std::string::npos)
        << error.what();
  }
}

TEST_F(JitSelection, AnNvrtcTooOldIsAnErrorCarryingBothReasons) {
  try {
    select_path(prebuilt("sm_80.fatbin"), {12, 0}, driver_, true,
                []() -> TargetPlan { throw std::runtime_error("NVRTC 11.8 knows up to sm_90"); });
    FAIL() << "selected a path";
  } catch (const SelectionError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("sm_80 SASS runs only on 8.x"), std::string::npos) << message;
    EXPECT_NE(message.find("NVRTC 11.8 knows up to sm_90"), std::string::npos) << message;
  }
}

TEST_F(JitSelection, NoPrebuiltImagesAtAllGoesStraightToNvrtc) {
  const auto selection = select_path(archfit::binary::FileScan{}, {10, 0}, driver_, true, [] {
    return nvrtc_13({10, 0});
  });
  EXPECT_EQ(selection.path, JitPath::nvrtc);
  EXPECT_EQ(selection.arch, "sm_100");
  EXPECT_NE(selection.reason.find("ships no prebuilt image"), std::string::npos);
}
