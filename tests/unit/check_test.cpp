#include "check/check.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "check/report_json.hpp"

namespace fs = std::filesystem;
using archfit::check::CheckError;
using archfit::check::CheckOptions;
using archfit::check::OverallVerdict;
using archfit::check::run_check;
using archfit::compat::Verdict;

namespace {

// A site-packages built from the nvcc fixtures: "torch" whose library has
// SASS sm_86 and sm_89 and no PTX (like a cu124 wheel on an RTX 50), and
// "fastops" whose extension is compute_90 PTX only (ISA 9.0, nvcc 13.0).
class CheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path fixtures = ARCHFIT_FIXTURE_DIR;
    if (!fs::exists(fixtures / "sm_86_sm_89.so") || !fs::exists(fixtures / "compute_90.so")) {
      GTEST_SKIP() << "nvcc fixtures are not built in " << fixtures;
    }
    site_ = fs::temp_directory_path() /
            ("archfit_check_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(site_);
    install("torch", "2.5.1+cu124", {{"torch/lib/libtorch_cuda.so", fixtures / "sm_86_sm_89.so"}});
    write("torch/version.py", "__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\n");
    install("fastops", "1.0", {{"fastops/_C.so", fixtures / "compute_90.so"}});
    options_.site_packages = {site_};
    options_.libcuda =
        site_ / "no-driver-here" / "libcuda.so.1";  // this machine's GPU must not matter
  }
  void TearDown() override { fs::remove_all(site_); }
  void write(const std::string& relative, const std::string& text) {
    fs::create_directories((site_ / relative).parent_path());
    std::ofstream(site_ / relative) << text;
  }
  void install(const std::string& name, const std::string& version,
               const std::vector<std::pair<std::string, fs::path>>& files) {
    std::string record;
    for (const auto& [relative, source] : files) {
      fs::create_directories((site_ / relative).parent_path());
      fs::copy_file(source, site_ / relative);
      record += relative + ",,\n";
    }
    write(name + "-" + version + ".dist-info/METADATA",
          "Name: " + name + "\nVersion: " + version + "\n");
    write(name + "-" + version + ".dist-info/RECORD", record);
  }
  const archfit::check::ComponentResult& component(const archfit::check::CheckReport& report,
                                                   const std::string& name) {
    for (const auto& c : report.components) {
      if (c.component.name == name) return c;
    }
    ADD_FAILURE() << "no component " << name;
    static archfit::check::ComponentResult none;
    return none;
  }
  fs::path site_;
  CheckOptions options_;
};

}  // namespace

TEST_F(CheckTest, Rtx5090FailsOnATorchWithoutSm120AndNamesTheTorchThatFits) {
  options_.gpu = "RTX 5090";
  const auto report = run_check(options_);
  ASSERT_TRUE(report.device);
  EXPECT_TRUE(report.device->simulated);
  EXPECT_EQ(report.device->cc.sm(), 120u);
  EXPECT_EQ(report.verdict, OverallVerdict::fails);
  ASSERT_EQ(report.torch, "2.5.1+cu124");
  ASSERT_EQ(report.components.size(), 2u);
  EXPECT_EQ(report.components[0].component.name, "torch");  // worst first
  const auto& torch = component(report, "torch");
  EXPECT_EQ(torch.verdict, Verdict::no_image);
  EXPECT_EQ(torch.component.version, "2.5.1+cu124");
  EXPECT_NE(torch.evidence.find("SASS sm_86 sm_89, no PTX; device is sm_120"), std::string::npos)
      << torch.evidence;
  ASSERT_EQ(torch.fix.commands.size(), 1u);
  EXPECT_EQ(torch.fix.commands[0],
            "pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cu128");
  const auto& fastops = component(report, "fastops");
  EXPECT_EQ(fastops.verdict, Verdict::ptx_jit);  // compute_90 PTX JIT-compiles for 12.0
  EXPECT_TRUE(fastops.fix.commands.empty());
}

TEST_F(CheckTest, AnOldDriverTurnsTheJitIntoAFailureWithTheDriverToInstall) {
  options_.gpu = "RTX 5090";
  options_.driver = "570.86";  // knows PTX ISA up to 8.7; the fixture's PTX is 9.0
  const auto report = run_check(options_);
  EXPECT_EQ(report.driver.max_ptx_isa->to_string(), "8.7");
  const auto& fastops = component(report, "fastops");
  EXPECT_EQ(fastops.verdict, Verdict::ptx_too_new_for_driver);
  EXPECT_NE(fastops.fix.summary.find("Update the NVIDIA driver to 580.65.06 or newer"),
            std::string::npos)
      << fastops.fix.summary;
}

TEST_F(CheckTest, Rtx4090RunsTorchNativelyButNotPtxBuiltForHopper) {
  options_.gpu = "GeForce RTX 4090";
  const auto report = run_check(options_);
  EXPECT_EQ(report.verdict, OverallVerdict::fails);
  EXPECT_EQ(component(report, "torch").verdict, Verdict::native);
  const auto& fastops = component(report, "fastops");
  EXPECT_EQ(fastops.verdict, Verdict::no_image);
  ASSERT_FALSE(fastops.fix.commands.empty());
  EXPECT_NE(fastops.fix.commands[0].find("TORCH_CUDA_ARCH_LIST=\"8.9\""), std::string::npos);
}

TEST_F(CheckTest, HopperFitsPtxBuiltForIt) {
  options_.gpu = "sm_90";
  fs::remove_all(site_ / "torch");  // only fastops' compute_90 PTX is left
  const auto report = run_check(options_);
  EXPECT_EQ(report.verdict, OverallVerdict::fits);
  EXPECT_EQ(component(report, "fastops").verdict, Verdict::ptx_jit);
}

TEST_F(CheckTest, WithoutAGpuTheReportSaysSoAndJudgesNothing) {
  const auto report = run_check(options_);
  EXPECT_FALSE(report.device);
  EXPECT_EQ(report.verdict, OverallVerdict::unknown);
  std::string findings;
  for (const auto& f : report.findings) findings += f + "\n";
  EXPECT_NE(findings.find("No NVIDIA driver"), std::string::npos) << findings;
  EXPECT_NE(findings.find("pass --gpu"), std::string::npos) << findings;
}

TEST_F(CheckTest, JsonIsTheVersionedCheckDocument) {
  options_.gpu = "RTX 5090";
  const auto doc = archfit::check::check_document(run_check(options_));
  EXPECT_EQ(doc["schema"], "archfit.check/1");
  EXPECT_EQ(doc["verdict"], "fails");
  EXPECT_EQ(doc["devices"][0]["sm"], 120);
  EXPECT_EQ(doc["devices"][0]["simulated"], true);
  const auto& torch = doc["components"][0];
  EXPECT_EQ(torch["name"], "torch");
  EXPECT_EQ(torch["kind"], "distribution");
  EXPECT_EQ(torch["verdict"], "no-image");
  EXPECT_EQ(torch["binaries"][0]["sass"], (nlohmann::json{"sm_86", "sm_89"}));
  EXPECT_FALSE(torch["fix"]["commands"].empty());
}

TEST_F(CheckTest, BadInputIsACheckErrorSayingWhatToChange) {
  options_.gpu = "RTX 9999 Ultra";
  try {
    run_check(options_);
    FAIL() << "an unknown GPU name must be an error";
  } catch (const CheckError& error) {
    EXPECT_NE(std::string(error.what()).find("closest known names"), std::string::npos)
        << error.what();
  }
  options_.gpu = "RTX 5090";
  options_.driver = "not-a-driver";
  EXPECT_THROW(run_check(options_), CheckError);
  options_.driver.reset();
  options_.site_packages.clear();
  EXPECT_THROW(run_check(options_), CheckError);  // nothing to check
}

TEST_F(CheckTest, ListsTheCudaRuntimesAProcessCouldLoadAndWarnsWhenMajorsMix) {
  options_.gpu = "RTX 5090";
  fs::create_directories(site_ / "nvidia" / "cuda_runtime" / "lib");
  std::ofstream(site_ / "nvidia" / "cuda_runtime" / "lib" / "libcudart.so.12") << "x";
  const auto report = run_check(options_);
  ASSERT_FALSE(report.libraries.empty());
  EXPECT_EQ(report.libraries[0].name,
            "cudart");  // wheels first: torch loads them through its RPATH
  EXPECT_EQ(report.libraries[0].version, "12");
  EXPECT_EQ(report.libraries[0].origin, "wheel nvidia/cuda_runtime");
  const bool other_major =
      std::any_of(report.libraries.begin(), report.libraries.end(), [](const auto& library) {
        return library.name == "cudart" && !library.version.empty() &&
               !library.version.starts_with("12");
      });
  const bool warned =
      std::any_of(report.findings.begin(), report.findings.end(), [](const std::string& finding) {
        return finding.starts_with("More than one CUDA runtime major");
      });
  EXPECT_EQ(warned, other_major);
}
