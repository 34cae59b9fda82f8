#include "compat/verdict.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

using archfit::compat::badness;
using archfit::compat::is_failure;
using archfit::compat::is_warning;
using archfit::compat::Verdict;
using archfit::compat::worst_of;

TEST(CompatVerdict, NamesAreTheOnesFixedByTheCheckSchema) {
  // docs/check-json.md (`verdict`): these strings are a public contract.
  const std::vector<std::pair<Verdict, std::string_view>> names = {
      {Verdict::native, "native"},
      {Verdict::ptx_jit, "ptx-jit"},
      {Verdict::no_image, "no-image"},
      {Verdict::ptx_too_new_for_driver, "ptx-too-new-for-driver"},
      {Verdict::relocatable_only, "relocatable-only"},
      {Verdict::no_device_code, "no-device-code"},
      {Verdict::driver_too_old, "driver-too-old"},
      {Verdict::wrong_platform, "wrong-platform"},
      {Verdict::no_cuda_build, "no-cuda-build"},
      {Verdict::unknown, "unknown"},
  };
  for (const auto& [verdict, name] : names) {
    EXPECT_EQ(archfit::compat::to_string(verdict), name);
    EXPECT_EQ(archfit::compat::verdict_from_string(name), verdict);
  }
  EXPECT_FALSE(archfit::compat::verdict_from_string("ptx_jit"));
  EXPECT_FALSE(archfit::compat::verdict_from_string("fits"));
}

TEST(CompatVerdict, NoImageDriverAndPlatformProblemsAreFailuresAndPtxJitWarns) {
  EXPECT_TRUE(is_failure(Verdict::no_image));
  EXPECT_TRUE(is_failure(Verdict::ptx_too_new_for_driver));
  EXPECT_TRUE(is_failure(Verdict::driver_too_old));
  EXPECT_TRUE(is_failure(Verdict::wrong_platform));
  EXPECT_TRUE(is_failure(Verdict::no_cuda_build));    // a CPU-only torch (issue 33)
  EXPECT_TRUE(is_failure(Verdict::missing_library));  // it does not load (issue 36)
  for (const Verdict verdict :
       {Verdict::native, Verdict::ptx_jit, Verdict::relocatable_only, Verdict::no_device_code}) {
    EXPECT_FALSE(is_failure(verdict)) << archfit::compat::to_string(verdict);
  }
  EXPECT_TRUE(is_warning(Verdict::ptx_jit));
  EXPECT_FALSE(is_warning(Verdict::native));
  EXPECT_FALSE(is_warning(Verdict::no_image));
}

TEST(CompatVerdict, RanksWorstFirstFromWrongPlatformToNoDeviceCode) {
  const std::vector<Verdict> worst_first = {
      Verdict::wrong_platform, Verdict::missing_library, Verdict::no_cuda_build,
      Verdict::no_image,       Verdict::driver_too_old,  Verdict::ptx_too_new_for_driver,
      Verdict::ptx_jit,        Verdict::native,          Verdict::relocatable_only,
      Verdict::no_device_code};
  for (std::size_t i = 1; i < worst_first.size(); ++i) {
    EXPECT_GT(badness(worst_first[i - 1]), badness(worst_first[i]))
        << archfit::compat::to_string(worst_first[i - 1]) << " vs "
        << archfit::compat::to_string(worst_first[i]);
  }
}

TEST(CompatVerdict, ComponentTakesItsWorstBinarysVerdict) {
  const std::vector<Verdict> warns = {Verdict::native, Verdict::ptx_jit, Verdict::native};
  EXPECT_EQ(worst_of(warns), Verdict::ptx_jit);
  // A driver update would fix the PTX binary but not the one with no image.
  const std::vector<Verdict> fails = {Verdict::ptx_too_new_for_driver, Verdict::native,
                                      Verdict::no_image};
  EXPECT_EQ(worst_of(fails), Verdict::no_image);
  const std::vector<Verdict> driver = {Verdict::ptx_jit, Verdict::ptx_too_new_for_driver};
  EXPECT_EQ(worst_of(driver), Verdict::ptx_too_new_for_driver);
}

TEST(CompatVerdict, BinariesThatLaunchNothingDoNotDragAComponentDown) {
  // A wheel's pure-host .so files and device-link libraries sit beside its kernels.
  const std::vector<Verdict> mixed = {Verdict::no_device_code, Verdict::native,
                                      Verdict::relocatable_only, Verdict::no_device_code};
  EXPECT_EQ(worst_of(mixed), Verdict::native);
  const std::vector<Verdict> launches_nothing = {Verdict::no_device_code,
                                                 Verdict::relocatable_only};
  EXPECT_EQ(worst_of(launches_nothing), Verdict::relocatable_only);
  const std::vector<Verdict> host_only = {Verdict::no_device_code};
  EXPECT_EQ(worst_of(host_only), Verdict::no_device_code);
  EXPECT_EQ(worst_of({}), Verdict::no_device_code);
}

}  // namespace

TEST(CompatVerdict, TheTableHoldsEveryVerdictOnceAndIsWhatTheQuestionsRead) {
  const auto table = archfit::compat::verdict_table();
  ASSERT_EQ(table.size(), 11u);
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto& facts = table[i];
    EXPECT_EQ(archfit::compat::to_string(facts.verdict), facts.name);
    EXPECT_EQ(is_failure(facts.verdict), facts.blocks) << facts.name;
    EXPECT_EQ(is_warning(facts.verdict), facts.warns) << facts.name;
    EXPECT_FALSE(facts.blocks && facts.warns) << facts.name;
    EXPECT_FALSE(facts.blocks && facts.runs) << facts.name;
    EXPECT_EQ(archfit::compat::runs(facts.verdict), facts.runs) << facts.name;
    EXPECT_FALSE(facts.meaning.empty()) << facts.name;
    EXPECT_EQ(badness(facts.verdict), static_cast<int>(i)) << facts.name;  // best first
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(table[j].verdict, facts.verdict) << facts.name;
  }
  EXPECT_TRUE(archfit::compat::runs(Verdict::native));
  EXPECT_TRUE(archfit::compat::runs(Verdict::ptx_jit));
  EXPECT_FALSE(archfit::compat::runs(Verdict::relocatable_only));
  EXPECT_FALSE(archfit::compat::runs(Verdict::unknown));
}
