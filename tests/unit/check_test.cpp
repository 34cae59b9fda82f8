#include "check/check.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>

#include "check/report_json.hpp"
#include "check_resources.hpp"
#include "fixture_site.hpp"
#include "saved_env.hpp"

namespace fs = std::filesystem;
using archfit::check::CheckError;
using archfit::check::CheckRequest;
using archfit::check::CheckResources;
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
    site_dir_ = std::make_unique<archfit::testing::FixtureSite>(
        std::string("check_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    site_ = site_dir_->root();
    install("torch", "2.5.1+cu124", {{"torch/lib/libtorch_cuda.so", fixtures / "sm_86_sm_89.so"}});
    write("torch/version.py", "__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\n");
    install("fastops", "1.0", {{"fastops/_C.so", fixtures / "compute_90.so"}});
    options_.site_packages = {site_};
    // This machine's GPU must not matter.
    resources_ = archfit::testing::check_resources(site_ / "no-driver-here" / "libcuda.so.1");
  }
  void write(const std::string& relative, const std::string& text) {
    site_dir_->write(relative, text);
  }
  void install(const std::string& name, const std::string& version,
               const std::vector<std::pair<std::string, fs::path>>& files) {
    site_dir_->install(name, version, files);
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
  std::unique_ptr<archfit::testing::FixtureSite> site_dir_;
  fs::path site_;
  CheckRequest options_;
  CheckResources resources_;
};

}  // namespace

TEST_F(CheckTest, Rtx5090FailsOnATorchWithoutSm120AndNamesTheTorchThatFits) {
  options_.gpus = {"RTX 5090"};
  const auto report = run_check(options_, resources_);
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_TRUE(report.devices[0].simulated);
  EXPECT_EQ(report.devices[0].cc.sm(), 120u);
  EXPECT_EQ(report.verdict, OverallVerdict::fails);
  ASSERT_EQ(report.torch, "2.5.1+cu124");
  ASSERT_EQ(report.components.size(), 2u);
  EXPECT_EQ(report.components[0].component.name, "torch");  // worst first
  const auto& torch = component(report, "torch");
  EXPECT_EQ(torch.verdict, Verdict::no_image);
  EXPECT_EQ(torch.component.version, "2.5.1+cu124");
  EXPECT_NE(torch.evidence.find("SASS sm_86 sm_89, no PTX; device is sm_120"), std::string::npos)
      << torch.evidence;
  // No driver named: the newest build for sm_120, PyPI's own, and the
  // driver it needs; the oldest build with sm_120 as the smallest change.
  ASSERT_EQ(torch.fix.commands.size(), 1u);
  EXPECT_EQ(torch.fix.commands[0], "pip install torch==2.15.0");
  EXPECT_EQ(torch.fix.driver, "580.65.06");
  ASSERT_FALSE(torch.fix.alternatives.empty());
  EXPECT_EQ(torch.fix.alternatives[0].commands.at(0),
            "pip install torch==2.7.0+cu128 --index-url https://download.pytorch.org/whl/cu128");
  const auto& fastops = component(report, "fastops");
  EXPECT_EQ(fastops.verdict, Verdict::ptx_jit);  // compute_90 PTX JIT-compiles for 12.0
  EXPECT_TRUE(fastops.fix.commands.empty());
}

TEST_F(CheckTest, AnOldDriverTurnsTheJitIntoAFailureWithTheDriverToInstall) {
  options_.gpus = {"RTX 5090"};
  options_.driver = "570.86";  // knows PTX ISA up to 8.7; the fixture's PTX is 9.0
  const auto report = run_check(options_, resources_);
  EXPECT_EQ(report.driver.max_ptx_isa->to_string(), "8.7");
  const auto& fastops = component(report, "fastops");
  EXPECT_EQ(fastops.verdict, Verdict::ptx_too_new_for_driver);
  EXPECT_NE(fastops.fix.summary.find("Update the NVIDIA driver to 580.65.06 or newer"),
            std::string::npos)
      << fastops.fix.summary;
}

TEST_F(CheckTest, Rtx4090RunsTorchNativelyButNotPtxBuiltForHopper) {
  options_.gpus = {"GeForce RTX 4090"};
  const auto report = run_check(options_, resources_);
  EXPECT_EQ(report.verdict, OverallVerdict::fails);
  EXPECT_EQ(component(report, "torch").verdict, Verdict::native);
  const auto& fastops = component(report, "fastops");
  EXPECT_EQ(fastops.verdict, Verdict::no_image);
  ASSERT_FALSE(fastops.fix.commands.empty());
  EXPECT_NE(fastops.fix.commands[0].find("TORCH_CUDA_ARCH_LIST=\"8.9\""), std::string::npos);
}

TEST_F(CheckTest, HopperFitsPtxBuiltForIt) {
  options_.gpus = {"sm_90"};
  fs::remove_all(site_ / "torch");  // only fastops' compute_90 PTX is left
  const auto report = run_check(options_, resources_);
  EXPECT_EQ(report.verdict, OverallVerdict::fits);
  EXPECT_EQ(component(report, "fastops").verdict, Verdict::ptx_jit);
}

TEST_F(CheckTest, WithoutAGpuTheReportSaysSoAndJudgesNothing) {
  const auto report = run_check(options_, resources_);
  EXPECT_TRUE(report.devices.empty());
  EXPECT_EQ(report.verdict, OverallVerdict::unknown);
  // One sentence on why, not a finding per probe step.
  EXPECT_NE(report.no_gpu.find("no NVIDIA driver"), std::string::npos) << report.no_gpu;
  // Nothing judged is nothing passed: every verdict is unknown.
  ASSERT_FALSE(report.components.empty());
  for (const auto& component : report.components) {
    EXPECT_EQ(component.verdict, archfit::compat::Verdict::unknown) << component.component.name;
    for (const auto& binary : component.binaries)
      EXPECT_EQ(binary.judgement.verdict, archfit::compat::Verdict::unknown) << binary.path;
  }
  for (const auto& stack : report.stacks)
    EXPECT_EQ(stack.verdict, archfit::compat::Verdict::unknown) << stack.name;
  EXPECT_NE(report.summary.find("unknown: no GPU to judge against"), std::string::npos)
      << report.summary;
}

TEST_F(CheckTest, JsonIsTheVersionedCheckDocument) {
  options_.gpus = {"RTX 5090"};
  const auto doc = archfit::check::check_document(run_check(options_, resources_));
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
  options_.gpus = {"RTX 9999 Ultra"};
  try {
    run_check(options_, resources_);
    FAIL() << "an unknown GPU name must be an error";
  } catch (const CheckError& error) {
    EXPECT_NE(std::string(error.what()).find("closest known names"), std::string::npos)
        << error.what();
  }
  options_.gpus = {"RTX 5090"};
  options_.driver = "not-a-driver";
  EXPECT_THROW(run_check(options_, resources_), CheckError);
  options_.driver.reset();
  options_.site_packages.clear();
  EXPECT_THROW(run_check(options_, resources_), CheckError);  // nothing to check
}

TEST_F(CheckTest, ListsTheCudaRuntimesAProcessCouldLoadAndWarnsWhenMajorsMix) {
  options_.gpus = {"RTX 5090"};
  fs::create_directories(site_ / "nvidia" / "cuda_runtime" / "lib");
  std::ofstream(site_ / "nvidia" / "cuda_runtime" / "lib" / "libcudart.so.12") << "x";
  const auto report = run_check(options_, resources_);
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

TEST_F(CheckTest, EveryGpuIsJudgedAndTheVerdictIsTheWorstOfThem) {
  options_.gpus = {"RTX 4090", "RTX 5090"};
  const auto report = run_check(options_, resources_);
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_EQ(report.verdict, OverallVerdict::fails);
  // torch: SASS sm_86/sm_89 runs on the 4090, nothing runs on the 5090.
  const auto& torch = component(report, "torch");
  EXPECT_EQ(torch.per_device, (std::vector<Verdict>{Verdict::native, Verdict::no_image}));
  EXPECT_EQ(torch.verdict, Verdict::no_image);
  EXPECT_EQ(torch.device, "GeForce RTX 5090");
  EXPECT_NE(torch.fix.summary.find("sm_120"), std::string::npos) << torch.fix.summary;
  // fastops: compute_90 PTX JIT-compiles on the 5090 but cannot run on the 4090.
  const auto& fastops = component(report, "fastops");
  EXPECT_EQ(fastops.per_device, (std::vector<Verdict>{Verdict::no_image, Verdict::ptx_jit}));
  EXPECT_EQ(fastops.device, "GeForce RTX 4090");
  ASSERT_FALSE(fastops.fix.commands.empty());
  // The rebuild covers both GPUs, so fixing one does not break the other.
  EXPECT_NE(fastops.fix.commands[0].find("TORCH_CUDA_ARCH_LIST=\"8.9;12.0\""), std::string::npos)
      << fastops.fix.commands[0];
}

TEST_F(CheckTest, EveryRealGpuTheDriverReportsIsJudged) {
  const archfit::testing::SavedEnv saved{"ARCHFIT_FAKE_CUDA_DEVICES", "ARCHFIT_FAKE_CUDA_INIT"};
  archfit::testing::set_env(
      "ARCHFIT_FAKE_CUDA_DEVICES",
      "NVIDIA GeForce RTX 4090,8.9,25757220864;NVIDIA H100 80GB HBM3,9.0,85520809984");
  archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_INIT");
  resources_.libcuda = ARCHFIT_FAKE_CUDA;
  const auto report = run_check(options_, resources_);
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_FALSE(report.devices[1].simulated);
  EXPECT_EQ(report.devices[1].cc.sm(), 90u);
  const auto& fastops = component(report, "fastops");
  EXPECT_EQ(fastops.per_device, (std::vector<Verdict>{Verdict::no_image, Verdict::ptx_jit}));
  EXPECT_EQ(report.verdict, OverallVerdict::fails);
}

TEST_F(CheckTest, OnAJetsonTheTorchFixPointsAtJetPackNotADriverRelease) {
  options_.gpus = {"Jetson Thor"};
  const auto report = run_check(options_, resources_);
  const auto& torch = component(report, "torch");
  // The fixtures are x86_64 libraries; a Jetson is an aarch64 machine.
  EXPECT_EQ(torch.verdict, Verdict::wrong_platform);
  EXPECT_NE(torch.fix.summary.find("JetPack"), std::string::npos) << torch.fix.summary;
  EXPECT_EQ(torch.fix.summary.find("NVIDIA driver"), std::string::npos) << torch.fix.summary;
}

// --confirm (check/confirm.cpp) against the test-only driver, whose
// cuModuleLoadData applies NVIDIA's rules on its own (tests/fakes/).
class CheckConfirmTest : public CheckTest {
 protected:
  void SetUp() override {
    CheckTest::SetUp();
    if (IsSkipped()) return;
    archfit::testing::set_env(
        "ARCHFIT_FAKE_CUDA_DEVICES",
        "NVIDIA GeForce RTX 4090,8.9,25757220864;NVIDIA H100 80GB HBM3,9.0,85520809984");
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_INIT");
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_MODULE_LOAD");
    archfit::testing::set_env("ARCHFIT_FAKE_CUDA_VERSION", "13000");
    resources_.libcuda = ARCHFIT_FAKE_CUDA;
    options_.confirm = true;
  }
  const archfit::check::DriverAnswer* answer(const archfit::check::ComponentResult& c,
                                             const std::string& device) {
    for (const auto& a : c.binaries.at(0).driver)
      if (a.device == device) return &a;
    return nullptr;
  }
  archfit::testing::SavedEnv saved_{"ARCHFIT_FAKE_CUDA_DEVICES", "ARCHFIT_FAKE_CUDA_INIT",
                                    "ARCHFIT_FAKE_CUDA_MODULE_LOAD", "ARCHFIT_FAKE_CUDA_VERSION"};
};

TEST_F(CheckConfirmTest, TheDriverAgreesWithEveryVerdictOnEveryGpu) {
  const auto report = run_check(options_, resources_);
  ASSERT_TRUE(report.confirm);
  EXPECT_EQ(report.confirm->asked, 4u);  // two binaries on two GPUs
  EXPECT_EQ(report.confirm->disagreed, 0u);
  const auto& torch = component(report, "torch");
  ASSERT_TRUE(answer(torch, "NVIDIA GeForce RTX 4090"));
  EXPECT_TRUE(answer(torch, "NVIDIA GeForce RTX 4090")->loaded);  // sm_89 SASS
  ASSERT_TRUE(answer(torch, "NVIDIA H100 80GB HBM3"));
  EXPECT_FALSE(answer(torch, "NVIDIA H100 80GB HBM3")->loaded);  // no sm_90, no PTX
  EXPECT_EQ(answer(torch, "NVIDIA H100 80GB HBM3")->error, "CUDA_ERROR_NO_BINARY_FOR_GPU (209)");
  const auto& fastops = component(report, "fastops");
  EXPECT_FALSE(answer(fastops, "NVIDIA GeForce RTX 4090")->loaded);  // compute_90 PTX on 8.9
  EXPECT_TRUE(answer(fastops, "NVIDIA H100 80GB HBM3")->loaded);
  for (const auto& c : report.components)
    for (const auto& b : c.binaries)
      for (const auto& a : b.driver) EXPECT_TRUE(a.agrees) << b.path << " on " << a.device;
}

TEST_F(CheckConfirmTest, ADriverThatRefusesWhatArchfitSaysRunsIsReportedAsADisagreement) {
  archfit::testing::set_env("ARCHFIT_FAKE_CUDA_MODULE_LOAD", "209");  // refuses everything
  const auto report = run_check(options_, resources_);
  ASSERT_TRUE(report.confirm);
  EXPECT_EQ(report.confirm->disagreed, 2u);  // torch on the 4090, fastops on the H100
  std::string findings;
  for (const auto& f : report.findings) findings += f + "\n";
  EXPECT_NE(findings.find("The driver disagrees about " +
                          (site_ / "torch/lib/libtorch_cuda.so").make_preferred().string() +
                          " on NVIDIA GeForce RTX 4090: archfit judged native, but the driver "
                          "answered CUDA_ERROR_NO_BINARY_FOR_GPU (209)."),
            std::string::npos)
      << findings;
  const auto json = archfit::check::check_document(report);
  EXPECT_EQ(json["confirm"]["disagreed"], 2);
}

TEST_F(CheckConfirmTest, SimulatedGpusAreNotConfirmedAndTheReportSaysSo) {
  options_.gpus = {"RTX 5090"};
  const auto report = run_check(options_, resources_);
  ASSERT_TRUE(report.confirm);
  EXPECT_EQ(report.confirm->asked, 0u);
  std::string findings;
  for (const auto& f : report.findings) findings += f + "\n";
  EXPECT_NE(findings.find("the GPUs named with --gpu are simulated"), std::string::npos)
      << findings;
}

// Where the driver's own number cannot be read (WSL2 has no
// /proc/driver/nvidia/version, nor has this machine), the CUDA release it
// reports bounds it from below: the GA driver of that release.
TEST_F(CheckConfirmTest, ADriverWithoutAReadableNumberIsBoundedByItsCudaRelease) {
  ASSERT_FALSE(fs::exists("/proc/driver/nvidia/version")) << "this machine has a real driver";
  options_.confirm = false;
  archfit::testing::set_env("ARCHFIT_FAKE_CUDA_VERSION", "12080");
  const auto report = run_check(options_, resources_);
  EXPECT_EQ(report.driver.cuda_version, "12.8");
  EXPECT_EQ(report.driver.version, "570.26");
  EXPECT_TRUE(report.driver.at_least);
  ASSERT_TRUE(report.driver.max_ptx_isa);
  EXPECT_EQ(report.driver.max_ptx_isa->to_string(), "8.7");
  const auto json = archfit::check::check_document(report);
  EXPECT_EQ(json["driver"]["at_least"], true);
  EXPECT_EQ(json["driver"]["os"], "linux");
}

TEST_F(CheckConfirmTest, WithoutConfirmTheDriverIsNeverAskedToLoadAnything) {
  options_.confirm = false;
  archfit::testing::set_env("ARCHFIT_FAKE_CUDA_MODULE_LOAD", "209");
  const auto report = run_check(options_, resources_);
  EXPECT_FALSE(report.confirm);
  for (const auto& c : report.components)
    for (const auto& b : c.binaries) EXPECT_TRUE(b.driver.empty());
}

// bitsandbytes ships libbitsandbytes_cuda{118,…,124}.so and loads the one for
// torch's CUDA (cextension.py); only that one is judged. The site's torch is
// +cu124: its copy has sm_90 SASS, the cuda118 copy only sm_80 and sm_86.
TEST_F(CheckTest, OnlyTheBitsandbytesLibraryForTorchsCudaIsJudged) {
  const fs::path fixtures = ARCHFIT_FIXTURE_DIR;
  install("bitsandbytes", "0.45.0",
          {{"bitsandbytes/libbitsandbytes_cuda118.so", fixtures / "sm_80.so"},
           {"bitsandbytes/libbitsandbytes_cuda124.so", fixtures / "sm_90a.so"}});
  options_.gpus = {"H100"};
  auto report = run_check(options_, resources_);
  const auto& bnb = component(report, "bitsandbytes");
  EXPECT_EQ(bnb.verdict, Verdict::native);
  ASSERT_EQ(bnb.binaries.size(), 2u);
  size_t skipped = 0;
  for (const auto& b : bnb.binaries) {
    if (b.path.filename() == "libbitsandbytes_cuda118.so") {
      EXPECT_EQ(b.reach, archfit::check::Reach::unreached);
      EXPECT_NE(b.reach_reason.find("loads libbitsandbytes_cuda124.so for torch's CUDA 12.4"),
                std::string::npos)
          << b.reach_reason;
      ++skipped;
    } else {
      EXPECT_EQ(b.reach, archfit::check::Reach::loaded) << b.reach_reason;
    }
  }
  EXPECT_EQ(skipped, 1u);

  // A torch whose CUDA no copy matches: the package loads nothing.
  write("torch/version.py", "__version__ = '2.8.0+cu128'\ncuda: Optional[str] = '12.8'\n");
  report = run_check(options_, resources_);
  std::string findings;
  for (const auto& f : report.findings) findings += f + "\n";
  EXPECT_NE(findings.find("bitsandbytes 0.45.0 has no library for torch's CUDA 12.8"),
            std::string::npos)
      << findings;

  // No torch to say which: the newest copy is judged, and the report says so.
  fs::remove_all(site_ / "torch");
  report = run_check(options_, resources_);
  EXPECT_EQ(component(report, "bitsandbytes").verdict, Verdict::native);
  findings.clear();
  for (const auto& f : report.findings) findings += f + "\n";
  EXPECT_NE(findings.find("judged on its newest, libbitsandbytes_cuda124.so"), std::string::npos)
      << findings;
}
