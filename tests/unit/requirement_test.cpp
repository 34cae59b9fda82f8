#include "env/requirement.hpp"

#include <gtest/gtest.h>

using archfit::env::compare_versions;
using archfit::env::normalize_distribution_name;
using archfit::env::parse_requirement;
using archfit::env::satisfies;

// Requires-Dist lines as the real wheels write them (torch 2.8.0 and 2.15.0,
// torchvision 0.23.0, cuda-toolkit 13.2.2; tests/realworld has the wheels).
TEST(Requirement, ReadsTheLinesTheRealWheelsWrite) {
  auto r = parse_requirement(
      "nvidia-cufft-cu12==11.3.3.83; platform_system == \"Linux\" and platform_machine == "
      "\"x86_64\"");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->name, "nvidia-cufft-cu12");
  EXPECT_EQ(r->specifier, "==11.3.3.83");
  EXPECT_TRUE(r->when_extra.empty());

  r = parse_requirement("torch (==2.8.0)");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->name, "torch");
  EXPECT_EQ(r->specifier, "==2.8.0");

  r = parse_requirement("cuda-toolkit[cublas,cudart,cufft]==13.2.2; platform_system == \"Linux\"");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->name, "cuda-toolkit");
  EXPECT_EQ(r->extras, (std::vector<std::string>{"cublas", "cudart", "cufft"}));

  r = parse_requirement(
      "nvidia-cublas==13.4.1.3.*; (sys_platform == 'linux' and platform_machine "
      "== 'x86_64') and extra == 'cublas'");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->when_extra, "cublas");

  r = parse_requirement("opt-einsum>=3.3; extra == \"opt-einsum\"");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->when_extra, "opt-einsum");

  EXPECT_FALSE(parse_requirement("; extra == 'x'"));
  EXPECT_FALSE(parse_requirement("name[unclosed"));
}

TEST(Requirement, NamesCompareAsPipComparesThem) {
  EXPECT_EQ(normalize_distribution_name("Nvidia_CUDA.runtime--cu12"), "nvidia-cuda-runtime-cu12");
  EXPECT_EQ(normalize_distribution_name("xformers"), "xformers");
}

TEST(Requirement, VersionsCompareByTheirReleaseNumbers) {
  EXPECT_GT(compare_versions("2.14.1", "2.5.1"), 0);  // not as text
  EXPECT_GT(compare_versions("2.10", "2.9.1"), 0);
  EXPECT_EQ(compare_versions("2.10", "2.10.0"), 0);
  EXPECT_EQ(compare_versions("2.8.0+cu128", "2.8.0"), 0);  // the local label is no part of it
  EXPECT_GT(compare_versions("0.0.32.post2", "0.0.32.post1"), 0);
  EXPECT_GT(compare_versions("0.0.32.post1", "0.0.32"), 0);
  EXPECT_TRUE(satisfies("2.14.1+cu126", ">=2.10"));
  EXPECT_FALSE(satisfies("2.9.1", ">=2.10"));
  EXPECT_TRUE(satisfies("2.8.0+cu128", "==2.8.0"));
  EXPECT_FALSE(satisfies("2.8.1", "==2.8.0"));
  EXPECT_FALSE(satisfies("2.8.0", "~=2.8"));  // an operator it does not read never matches
}

// What may stand in a fix command (issue 34): names as PEP 508 writes them,
// versions as PEP 440 does; anything else is refused, never quoted in.
TEST(Requirement, OnlyGrammaticalNamesAndVersionsMayStandInACommand) {
  using archfit::env::is_distribution_name;
  using archfit::env::is_version;
  for (const char* name : {"torch", "nvidia-cublas-cu12", "zope.interface", "A", "triton_windows",
                           "onnxruntime-gpu", "x1"})
    EXPECT_TRUE(is_distribution_name(name)) << name;
  for (const char* name :
       {"", "evil$(touch /tmp/x)", "a b", "-a", "a-", "a\n", "`id`", "a;b", "name'", "naïve"})
    EXPECT_FALSE(is_distribution_name(name)) << name;
  EXPECT_FALSE(is_distribution_name(std::string(300, 'a')));
  for (const char* version : {"2.8.0", "2.8.0+cu128", "0.0.32.post2", "1.0rc1", "2!1.0", "1.0.dev3",
                              "v1.0", "1.31.1", "0.0.28.post1", "1.0-1", "2.5.1+cpu"})
    EXPECT_TRUE(is_version(version)) << version;
  for (const char* version :
       {"", "1.0`id`", "1.0; rm -rf /", "$(x)", "1.0 2.0", "latest", "1.0\n", "+cu128"})
    EXPECT_FALSE(is_version(version)) << version;
  EXPECT_FALSE(is_version("1." + std::string(200, '0')));
}
