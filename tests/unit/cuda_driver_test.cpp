#include "env/cuda_driver.hpp"
#include "native_path.hpp"
#include "saved_env.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using archfit::env::DriverProbeOptions;
using archfit::env::parse_nvrm_release;
using archfit::env::probe_driver;

namespace {

// Runs the probe against tests/fakes/fake_libcuda.c with the devices, driver
// version and cuInit result a test chooses.
class DriverProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    proc_ = fs::temp_directory_path() / ("archfit_nvrm_" + std::to_string(::getpid()));
    std::ofstream(proc_) << "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.16  Thu Jan  9 "
                            "18:33:03 UTC 2025\n"
                            "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
    options_.library = ARCHFIT_FAKE_CUDA;
    options_.proc_version = proc_;
    archfit::testing::set_env("ARCHFIT_FAKE_CUDA_VERSION", "12080");
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_INIT");
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_DEVICES");
  }
  void TearDown() override {
    fs::remove(proc_);
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_VERSION");
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_INIT");
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_DEVICES");
  }
  fs::path proc_;
  DriverProbeOptions options_;
};

std::string all_findings(const archfit::env::DriverProbe& probe) {
  std::string text;
  for (const auto& finding : probe.findings) text += finding + "\n";
  return text;
}

}  // namespace

TEST_F(DriverProbeTest, ReportsEachDeviceAndTheDriverVersions) {
  archfit::testing::set_env(
      "ARCHFIT_FAKE_CUDA_DEVICES",
      "NVIDIA GeForce RTX 5090,12.0,34190917632;NVIDIA H100 80GB HBM3,9.0,85045411840");
  const auto probe = probe_driver(options_);
  ASSERT_EQ(probe.devices.size(), 2u) << all_findings(probe);
  EXPECT_TRUE(probe.findings.empty()) << all_findings(probe);
  EXPECT_EQ(probe.cuda_version, 12080);
  EXPECT_EQ(probe.cuda_version_string(), "12.8");
  EXPECT_EQ(probe.release, "570.86.16");
  ASSERT_TRUE(probe.library);
  EXPECT_EQ(probe.library->filename(), fs::path(ARCHFIT_FAKE_CUDA).filename());
  const auto& rtx = probe.devices[0];
  EXPECT_EQ(rtx.name, "NVIDIA GeForce RTX 5090");
  EXPECT_EQ(rtx.cc_major, 12);
  EXPECT_EQ(rtx.cc_minor, 0);
  EXPECT_EQ(rtx.total_memory, 34190917632u);
  EXPECT_EQ(rtx.uuid, "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");
  EXPECT_EQ(rtx.pci_bus_id, "0000:01:00.0");
  EXPECT_EQ(probe.devices[1].cc_major, 9);
  EXPECT_EQ(probe.devices[1].pci_bus_id, "0000:02:00.0");
}

TEST_F(DriverProbeTest, NoDriverLibraryIsAFindingNotACrash) {
  options_.library = fs::temp_directory_path() / "no-such-dir" / "libcuda.so.1";
  const auto probe = probe_driver(options_);
  EXPECT_FALSE(probe.usable());
  EXPECT_FALSE(probe.library);
  ASSERT_EQ(probe.findings.size(), 1u);
  EXPECT_NE(probe.findings[0].find("No NVIDIA driver"), std::string::npos) << probe.findings[0];
  EXPECT_NE(probe.findings[0].find(archfit::testing::native_path("no-such-dir/libcuda.so.1")),
            std::string::npos)
      << probe.findings[0];
}

TEST_F(DriverProbeTest, CuInitWithoutADeviceSaysSoPlainly) {
  archfit::testing::set_env("ARCHFIT_FAKE_CUDA_INIT", "100");  // CUDA_ERROR_NO_DEVICE
  const auto probe = probe_driver(options_);
  EXPECT_FALSE(probe.usable());
  ASSERT_EQ(probe.findings.size(), 1u);
  EXPECT_NE(probe.findings[0].find("sees no GPU"), std::string::npos) << probe.findings[0];
  EXPECT_EQ(probe.cuda_version_string(), "12.8");  // the driver still said its version
}

TEST_F(DriverProbeTest, DriverAndKernelModuleMismatchNamesTheRemedy) {
  archfit::testing::set_env("ARCHFIT_FAKE_CUDA_INIT", "803");  // CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
  const auto probe = probe_driver(options_);
  ASSERT_EQ(probe.findings.size(), 1u);
  EXPECT_NE(probe.findings[0].find("cuInit failed"), std::string::npos) << probe.findings[0];
  EXPECT_NE(probe.findings[0].find("reboot or reinstall"), std::string::npos) << probe.findings[0];
}

TEST_F(DriverProbeTest, WorkingDriverWithZeroDevices) {
  const auto probe = probe_driver(options_);
  EXPECT_FALSE(probe.usable());
  ASSERT_EQ(probe.findings.size(), 1u);
  EXPECT_NE(probe.findings[0].find("reports no GPU"), std::string::npos) << probe.findings[0];
}

TEST_F(DriverProbeTest, ALibraryThatIsNotTheDriverIsRejected) {
  options_.library = ARCHFIT_NOT_A_DRIVER;
  const auto probe = probe_driver(options_);
  EXPECT_FALSE(probe.usable());
  ASSERT_EQ(probe.findings.size(), 1u);
  EXPECT_NE(probe.findings[0].find("not a working libcuda"), std::string::npos)
      << probe.findings[0];
}

TEST(NvrmRelease, ReadsProprietaryAndOpenKernelModuleLines) {
  EXPECT_EQ(parse_nvrm_release(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.16  Thu Jan  9 2025\n"),
            "570.86.16");
  EXPECT_EQ(
      parse_nvrm_release(
          "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build\n"),
      "580.65.06");
  EXPECT_EQ(parse_nvrm_release("NVRM version: NVIDIA UNIX aarch64 Kernel Module  550.54\n"),
            "550.54");
  EXPECT_EQ(parse_nvrm_release("no module here"), "");
}
