#include "compat/arch.hpp"

#include <gtest/gtest.h>

#include "compat/compat_error.hpp"

namespace {

using archfit::binary::Variant;
using archfit::compat::Arch;
using archfit::compat::CompatError;
using archfit::compat::ComputeCapability;
using archfit::compat::parse_arch;
using archfit::compat::parse_compute_capability;
using archfit::compat::same_family;

constexpr ComputeCapability cc(uint32_t major, uint32_t minor) { return {major, minor}; }

TEST(CompatArch, SplitsScannerSmNumbersIntoMajorAndMinor) {
  // The scanner reports 100 for sm_100; that is 10.0, not 1.00 or 100.0.
  EXPECT_EQ(ComputeCapability::from_sm(75), cc(7, 5));
  EXPECT_EQ(ComputeCapability::from_sm(86), cc(8, 6));
  EXPECT_EQ(ComputeCapability::from_sm(100), cc(10, 0));
  EXPECT_EQ(ComputeCapability::from_sm(103), cc(10, 3));
  EXPECT_EQ(ComputeCapability::from_sm(110), cc(11, 0));
  EXPECT_EQ(ComputeCapability::from_sm(120), cc(12, 0));
  EXPECT_EQ(ComputeCapability::from_sm(121), cc(12, 1));
  EXPECT_EQ(cc(12, 1).sm(), 121u);
  EXPECT_EQ(cc(10, 3).to_string(), "10.3");
  EXPECT_EQ(cc(12, 0).sm_name(), "sm_120");
}

TEST(CompatArch, OrdersByMajorThenMinor) {
  EXPECT_LT(cc(8, 9), cc(9, 0));
  EXPECT_LT(cc(9, 0), cc(10, 0));
  EXPECT_LT(cc(10, 3), cc(11, 0));
  EXPECT_LT(cc(11, 0), cc(12, 0));
  EXPECT_LT(cc(12, 0), cc(12, 1));
}

TEST(CompatArch, ParsesSmNamesDottedCapabilitiesAndBareSmNumbers) {
  EXPECT_EQ(parse_compute_capability("sm_120"), cc(12, 0));
  EXPECT_EQ(parse_compute_capability("compute_120"), cc(12, 0));
  EXPECT_EQ(parse_compute_capability("12.0"), cc(12, 0));
  EXPECT_EQ(parse_compute_capability("120"), cc(12, 0));
  EXPECT_EQ(parse_compute_capability("121"), cc(12, 1));
  EXPECT_EQ(parse_compute_capability("sm_75"), cc(7, 5));
  EXPECT_EQ(parse_compute_capability("8.6"), cc(8, 6));
  EXPECT_EQ(parse_compute_capability("86"), cc(8, 6));
  EXPECT_EQ(parse_compute_capability("10.3"), cc(10, 3));
}

TEST(CompatArch, ParsesArchSpecificAndFamilySuffixes) {
  EXPECT_EQ(parse_arch("sm_90a"), (Arch{cc(9, 0), Variant::arch_specific}));
  EXPECT_EQ(parse_arch("compute_100f"), (Arch{cc(10, 0), Variant::family_specific}));
  EXPECT_EQ(parse_arch("12.0f"), (Arch{cc(12, 0), Variant::family_specific}));
  EXPECT_EQ(parse_arch("121a"), (Arch{cc(12, 1), Variant::arch_specific}));
  EXPECT_EQ(parse_arch("sm_86"), (Arch{cc(8, 6), Variant::plain}));
}

TEST(CompatArch, RejectsMalformedNamesSayingWhichText) {
  for (const char* text : {"", "sm_", "sm_9", "9", "12.", ".0", "0.5", "12.10", "sm_12.0", "sm_90x",
                           "sm_90af", "gfx90a", "sm_99999", " sm_90", "sm_-90", "12.0.1"}) {
    SCOPED_TRACE(text);
    EXPECT_THROW(parse_arch(text), CompatError);
  }
  try {
    parse_arch("sm_9x");
    FAIL() << "sm_9x parsed";
  } catch (const CompatError& error) {
    EXPECT_NE(std::string(error.what()).find("\"sm_9x\""), std::string::npos) << error.what();
  }
}

TEST(CompatArch, RejectsAVariantWhereADeviceCapabilityIsWanted) {
  EXPECT_THROW(parse_compute_capability("sm_90a"), CompatError);
  EXPECT_THROW(parse_compute_capability("12.0f"), CompatError);
}

TEST(CompatArch, FamiliesAreTheOnesPtxasAccepts) {
  // ptxas 13.0: compute_100f for sm_100 and sm_103 only; compute_110f for
  // 110 only; compute_120f for 120 and 121 (docs/cuda-binaries.md).
  EXPECT_TRUE(same_family(cc(10, 0), cc(10, 3)));
  EXPECT_TRUE(same_family(cc(12, 0), cc(12, 1)));
  EXPECT_TRUE(same_family(cc(11, 0), cc(11, 0)));
  EXPECT_FALSE(same_family(cc(10, 0), cc(11, 0)));
  EXPECT_FALSE(same_family(cc(10, 3), cc(12, 0)));
  EXPECT_FALSE(same_family(cc(11, 0), cc(12, 0)));
  // nvcc 13.0 rejects compute_90f: families start with Blackwell.
  EXPECT_FALSE(same_family(cc(9, 0), cc(9, 0)));
  EXPECT_FALSE(archfit::compat::has_family(cc(9, 0)));
  EXPECT_EQ(archfit::compat::family_name(cc(12, 1)), "12.x");
}

TEST(CompatArch, TakesAnImagesArchFromItsSmAndVariant) {
  archfit::binary::Image image;
  image.kind = archfit::binary::ImageKind::sass;
  image.sm = 103;
  image.variant = Variant::family_specific;
  EXPECT_EQ(archfit::compat::arch_of(image), (Arch{cc(10, 3), Variant::family_specific}));
}

}  // namespace

// Compile targets are parsed in compat/ only (issue 25): NVRTC's request,
// `jit bundle`'s fatbinary kinds, the cache's image format and the CLI's list
// of supported archs all ask parse_target.
TEST(CompatArch, TargetsAreSmForACubinOrComputeForPtxWithTheirVariant) {
  using archfit::compat::parse_target;
  const auto cubin = parse_target("sm_90a");
  ASSERT_TRUE(cubin);
  EXPECT_FALSE(cubin->ptx);
  EXPECT_EQ(cubin->arch.cc.sm(), 90u);
  EXPECT_EQ(cubin->arch.variant, archfit::binary::Variant::arch_specific);
  EXPECT_EQ(cubin->number(), "90a");
  EXPECT_EQ(cubin->to_string(), "sm_90a");
  const auto ptx = parse_target("compute_120f");
  ASSERT_TRUE(ptx);
  EXPECT_TRUE(ptx->ptx);
  EXPECT_EQ(ptx->arch.cc.major, 12u);
  EXPECT_EQ(ptx->number(), "120f");
  EXPECT_EQ(parse_target("sm_100")->to_string(), "sm_100");
  for (const char* bad : {"12.0", "120", "sm_9", "sm_12.0", "compute_", "sm_90x", "sm_90af",
                          "gfx90a", "sm_12345", "", "SM_90"}) {
    EXPECT_FALSE(parse_target(bad)) << bad;
  }
}
