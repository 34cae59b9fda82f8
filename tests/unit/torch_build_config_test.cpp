// plugins/torch_probe/torch_build_config: libtorch's show_config text read
// into the facts archfit judges, on texts recorded from real builds
// (tests/data/torch/README.md says where each came from).
#include "torch_build_config.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using archfit::torch_probe::read_show_config;

std::string data_file(const std::string& name) {
  const std::string path = std::string(ARCHFIT_TEST_DATA_DIR) + "/torch/" + name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(TorchBuildConfig, AGpuMachineGivesTheArchFlagsCudaAndCudnn) {
  const auto config = read_show_config(data_file("show_config_2.7.1_cu126_with_gpu.txt"));
  EXPECT_TRUE(config.cuda);
  EXPECT_EQ(config.torch_version, "2.7.1");
  EXPECT_EQ(config.cuda_version, "12.6");
  EXPECT_EQ(config.cudnn_version, "9.5.1");
  const std::vector<std::string> expected = {"sm_50", "sm_60", "sm_70", "sm_75",
                                             "sm_80", "sm_86", "sm_90"};
  EXPECT_EQ(config.cuda_archs, expected);
}

TEST(TorchBuildConfig, WithoutADriverTheBuildSettingsStillNameCudaButNoArchFlags) {
  const auto config = read_show_config(data_file("show_config_2.7.1_cu126_no_driver.txt"));
  EXPECT_TRUE(config.cuda);
  EXPECT_EQ(config.torch_version, "2.7.1");
  EXPECT_EQ(config.cuda_version, "12.6");
  EXPECT_EQ(config.cudnn_version, "9.5.1");
  EXPECT_TRUE(config.cuda_archs.empty());
}

TEST(TorchBuildConfig, DebiansCpuOnlyLibtorchHasNoCuda) {
  const auto config = read_show_config(data_file("show_config_1.13.1_debian_cpu_only.txt"));
  EXPECT_FALSE(config.cuda);
  EXPECT_EQ(config.torch_version, "1.13.0");  // what Debian's 1.13.1 says of itself
  EXPECT_FALSE(config.cuda_version);
  EXPECT_FALSE(config.cudnn_version);
  EXPECT_TRUE(config.cuda_archs.empty());
}

TEST(TorchBuildConfig, PtxTargetsAndBracketedCodeListsAreRead) {
  // As TORCH_CUDA_ARCH_LIST="8.0;9.0+PTX" writes them, each target once.
  const auto config = read_show_config(
      "  - NVCC architecture flags: -gencode;arch=compute_80,code=sm_80;"
      "-gencode;arch=compute_90,code=[sm_90,compute_90];-gencode;arch=compute_80,code=sm_80\n");
  const std::vector<std::string> expected = {"sm_80", "sm_90", "compute_90"};
  EXPECT_EQ(config.cuda_archs, expected);
  EXPECT_TRUE(config.cuda);
}

TEST(TorchBuildConfig, EmptyGarbageAndHalfLinesGiveNothingAndNeverThrow) {
  for (const std::string text :
       {std::string(), std::string("\n\n\n"), std::string("\0\xff\xfe garbage", 12),
        std::string("  - NVCC architecture flags: code="),
        std::string("  - NVCC architecture flags: code=[sm_,compute_x,gfx90a"),
        std::string("  - Build settings: TORCH_VERSION=, CUDA_VERSION"),
        std::string(100000, ',')}) {
    const auto config = read_show_config(text);
    EXPECT_TRUE(config.cuda_archs.empty()) << text.substr(0, 60);
    EXPECT_FALSE(config.torch_version) << text.substr(0, 60);
    EXPECT_FALSE(config.cuda_version) << text.substr(0, 60);
  }
}

}  // namespace
