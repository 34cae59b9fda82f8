// A torch built without CUDA is a failure of its own on an NVIDIA machine
// (issue 33): PyPI's torch for Windows (torch/version.py: 2.8.0+cpu,
// cuda = None, measured on torch-2.8.0-cp312-cp312-win_amd64.whl) and the
// PyTorch index's +cpu builds for Linux. The fix installs the CUDA build,
// from PyTorch's index on Windows, in the environment's own interpreter.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>

#include "check/check.hpp"
#include "check/environment_commands.hpp"
#include "check/report_json.hpp"
#include "check_resources.hpp"
#include "fixture_site.hpp"

namespace fs = std::filesystem;
using archfit::check::CheckReport;
using archfit::check::CheckRequest;
using archfit::check::OverallVerdict;
using archfit::check::run_check;
using archfit::check::StackResult;
using archfit::compat::Verdict;

namespace {

constexpr const char* kCpuTorch = "__version__ = '2.8.0+cpu'\ncuda: Optional[str] = None\n";

class FrameworkBuilds : public ::testing::Test {
 protected:
  // A site whose torch is `version_py`, with torchvision beside it.
  void make_site(const std::string& layout, const std::string& version_py) {
    site_ = std::make_unique<archfit::testing::FixtureSite>(
        std::string("builds_") + ::testing::UnitTest::GetInstance()->current_test_info()->name(),
        layout);
    site_->install("torch", "2.8.0", {});
    site_->write("torch/version.py", version_py);
    site_->install("torchvision", "0.23.0", {});
    request_.site_packages = {site_->root()};
  }
  CheckReport check(const std::vector<std::string>& gpus) {
    request_.gpus = gpus;
    request_.driver = "580.88";
    return run_check(
        request_, archfit::testing::check_resources(site_->top() / "no-driver" / "libcuda.so.1"));
  }
  static const StackResult* torch_stack(const CheckReport& report) {
    const auto found = std::find_if(report.stacks.begin(), report.stacks.end(),
                                    [](const StackResult& s) { return s.anchor == "torch"; });
    return found == report.stacks.end() ? nullptr : &*found;
  }
  std::unique_ptr<archfit::testing::FixtureSite> site_;
  CheckRequest request_;
};

TEST_F(FrameworkBuilds, ACpuOnlyTorchFailsOnAnNvidiaGpuWithAVerdictOfItsOwn) {
  make_site("site-packages", kCpuTorch);
  const CheckReport report = check({"RTX 4090"});
  EXPECT_EQ(report.verdict, OverallVerdict::fails);
  const StackResult* torch = torch_stack(report);
  ASSERT_NE(torch, nullptr);
  EXPECT_EQ(torch->verdict, Verdict::no_cuda_build);
  EXPECT_EQ(torch->version, "2.8.0+cpu");
  EXPECT_NE(torch->evidence.find("a CPU-only build"), std::string::npos) << torch->evidence;
  EXPECT_NE(torch->explanation.find("Torch not compiled with CUDA enabled"), std::string::npos);
  ASSERT_FALSE(torch->fix.commands.empty()) << torch->fix.summary;
  EXPECT_NE(torch->fix.commands.front().find("torch=="), std::string::npos);
  // pip set to the CPU index would take torch==X as X+cpu: every way out
  // names the CUDA label and PyTorch's index.
  for (const auto* fix : {&torch->fix, &torch->fix.alternatives.at(0)}) {
    EXPECT_NE(fix->commands.front().find("+cu"), std::string::npos) << fix->commands.front();
    EXPECT_NE(fix->commands.front().find("--index-url https://download.pytorch.org/whl/cu"),
              std::string::npos)
        << fix->commands.front();
  }
  std::string all;  // a companion built once for every CUDA comes in a command of its own
  for (const auto& line : torch->fix.commands) all += line + "\n";
  EXPECT_NE(all.find("torchvision=="), std::string::npos) << all;
  const auto doc = archfit::check::check_document(report);
  EXPECT_EQ(doc["stacks"][0]["verdict"], "no-cuda-build");
}

TEST_F(FrameworkBuilds, WithoutAGpuACpuOnlyTorchStaysUnknown) {
  make_site("site-packages", kCpuTorch);
  const CheckReport report = check({});
  EXPECT_EQ(report.verdict, OverallVerdict::unknown);
  EXPECT_EQ(torch_stack(report), nullptr);
}

TEST_F(FrameworkBuilds, ACudaTorchWithoutDeviceCodeHereIsNotCalledCpuOnly) {
  make_site("site-packages", "__version__ = '2.8.0+cu128'\ncuda: Optional[str] = '12.8'\n");
  const CheckReport report = check({"RTX 4090"});
  const StackResult* torch = torch_stack(report);
  EXPECT_TRUE(torch == nullptr || torch->verdict != Verdict::no_cuda_build);
}

TEST_F(FrameworkBuilds, OnComfyuiPortableTheFixIsPythonEmbededFromPytorchsIndexForCmd) {
  make_site("ComfyUI_windows_portable/python_embeded/Lib/site-packages", kCpuTorch);
  const fs::path python = site_->top() / "ComfyUI_windows_portable/python_embeded/python.exe";
  std::ofstream(python) << "";  // never run: being there counts
  const CheckReport report = check({"RTX 5090"});
  const StackResult* torch = torch_stack(report);
  ASSERT_NE(torch, nullptr);
  EXPECT_EQ(torch->verdict, Verdict::no_cuda_build);
  ASSERT_FALSE(torch->fix.commands.empty()) << torch->fix.summary;
  const std::string& command = torch->fix.commands.front();
  const std::string interpreter =
      "\"" + archfit::check::windows_path(python.string()) + "\" -m pip install torch==";
  EXPECT_EQ(command.rfind(interpreter, 0), 0u) << command;
  // PyPI's torch for Windows is CPU-only: the index and the +cu label always,
  // and torchvision and torchaudio with it (torchaudio is not installed here;
  // a companion with one release for every CUDA, as from torch 2.12 on, comes
  // in a command of its own, from PyPI).
  EXPECT_NE(command.find("+cu"), std::string::npos) << command;
  std::string all;
  for (const auto& line : torch->fix.commands) all += line + "\n";
  EXPECT_NE(all.find(" torchvision=="), std::string::npos) << all;
  EXPECT_NE(all.find(" torchaudio=="), std::string::npos) << all;
  EXPECT_NE(command.find("--index-url https://download.pytorch.org/whl/cu"), std::string::npos)
      << command;
  EXPECT_EQ(torch->fix.shell, "cmd");
  ASSERT_EQ(torch->fix.powershell_commands.size(), torch->fix.commands.size());
  EXPECT_EQ(torch->fix.powershell_commands.front().rfind("& '", 0), 0u);
  for (const auto& line : torch->fix.commands) EXPECT_NE(line.rfind("pip ", 0), 0u) << line;
}

// A Windows environment runs on a Windows driver, whose numbers differ from
// Linux's for one release (CUDA 12.8 GA: 570.65 on Windows, 570.26 on Linux;
// NVIDIA's toolkit/driver table): the driver is judged, and asked for, in them.
TEST_F(FrameworkBuilds, OnWindowsTheDriverIsJudgedAndAskedForInWindowsNumbers) {
  make_site("ComfyUI_windows_portable/python_embeded/Lib/site-packages", kCpuTorch);
  request_.gpus = {"RTX 5090"};
  request_.driver = "570.26";  // 12.8 on Linux; older than 12.8's first Windows driver
  const CheckReport report = run_check(
      request_, archfit::testing::check_resources(site_->top() / "no-driver" / "libcuda.so.1"));
  EXPECT_EQ(report.driver.family, archfit::kb::DriverFamily::windows_driver);
  ASSERT_TRUE(report.driver.max_ptx_isa);
  EXPECT_EQ(report.driver.max_ptx_isa->to_string(), "8.5");  // 12.5's 555.85 ≤ 570.26 < 570.65
  ASSERT_EQ(report.devices.size(), 1u);
  ASSERT_TRUE(report.devices[0].first_driver);
  EXPECT_EQ(report.devices[0].first_driver->to_string(), "570.65");
  EXPECT_FALSE(report.devices[0].driver_knows_it);
  const StackResult* torch = torch_stack(report);
  ASSERT_NE(torch, nullptr);
  std::string fixes = torch->fix.summary + "\n";
  for (const auto& alternative : torch->fix.alternatives) fixes += alternative.summary + "\n";
  EXPECT_NE(fixes.find("NVIDIA Windows driver 570.65 or newer"), std::string::npos) << fixes;
  EXPECT_EQ(fixes.find("driver 570.26 or newer"), std::string::npos) << fixes;
  EXPECT_EQ(archfit::check::check_document(report)["driver"]["os"], "windows");

  // The same site-packages in a Linux layout keeps Linux's numbers.
  make_site("site-packages", kCpuTorch);
  const CheckReport linux_report = run_check(
      request_, archfit::testing::check_resources(site_->top() / "no-driver" / "libcuda.so.1"));
  EXPECT_EQ(linux_report.driver.family, archfit::kb::DriverFamily::linux_driver);
  EXPECT_EQ(linux_report.driver.max_ptx_isa->to_string(), "8.7");
  EXPECT_TRUE(linux_report.devices.at(0).driver_knows_it);
}

TEST_F(FrameworkBuilds, InALinuxVenvTheFixIsTheVenvsInterpreter) {
  make_site("venv/lib/python3.12/site-packages", kCpuTorch);
  const fs::path python = site_->top() / "venv/bin/python";
  fs::create_directories(python.parent_path());
  std::ofstream(python) << "#!/bin/sh\n";
  ::chmod(python.c_str(), 0755);
  const CheckReport report = check({"RTX 4090"});
  const StackResult* torch = torch_stack(report);
  ASSERT_NE(torch, nullptr);
  ASSERT_FALSE(torch->fix.commands.empty());
  EXPECT_EQ(torch->fix.commands.front().rfind("\"" + python.string() + "\" -m pip install ", 0), 0u)
      << torch->fix.commands.front();
  EXPECT_EQ(torch->fix.shell, "sh");
  EXPECT_TRUE(torch->fix.powershell_commands.empty());
}

// onnxruntime (CPU-only) and onnxruntime-gpu install the same `onnxruntime`
// package (packages.yaml `cpu_twins`; the 1.31.1 win_amd64 wheels' RECORDs
// give onnxruntime_pybind11_state.pyd 19,997,496 and 20,132,152 bytes).
// Whichever was installed last owns that module, told by the size on disk.
class CpuTwins : public FrameworkBuilds {
 protected:
  static constexpr const char* kCore = "onnxruntime/capi/onnxruntime_pybind11_state.so";
  void SetUp() override {
    site_ = std::make_unique<archfit::testing::FixtureSite>(
        std::string("twins_") + ::testing::UnitTest::GetInstance()->current_test_info()->name(),
        "venv/lib/python3.12/site-packages");
    request_.site_packages = {site_->root()};
    const fs::path python = site_->top() / "venv/bin/python";  // whose pip the fix runs
    fs::create_directories(python.parent_path());
    std::ofstream(python) << "#!/bin/sh\n";
    ::chmod(python.c_str(), 0755);
  }
  // A dist-info whose RECORD gives the core module `core_size` bytes.
  void install_twin(const std::string& name, size_t core_size,
                    const std::vector<std::string>& requires_dist = {}) {
    std::string metadata = "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.31.1\n";
    for (const auto& requirement : requires_dist)
      metadata += "Requires-Dist: " + requirement + "\n";
    const std::string dist_info = archfit::env::normalize_distribution_name(name);
    std::string folder = dist_info;
    std::replace(folder.begin(), folder.end(), '-', '_');
    site_->write(folder + "-1.31.1.dist-info/METADATA", metadata);
    site_->write(folder + "-1.31.1.dist-info/RECORD",
                 std::string(kCore) + ",sha256=x," + std::to_string(core_size) + "\n");
  }
  // The module as the last install left it.
  void core_of_size(size_t size) { site_->write(kCore, std::string(size, 'x')); }
  const StackResult* onnx_stack(const CheckReport& report) {
    const auto found = std::find_if(report.stacks.begin(), report.stacks.end(),
                                    [](const StackResult& s) { return s.name == "ONNX Runtime"; });
    return found == report.stacks.end() ? nullptr : &*found;
  }
  std::string findings(const CheckReport& report) {
    std::string all;
    for (const auto& finding : report.findings) all += finding + "\n";
    return all;
  }
};

TEST_F(CpuTwins, TheCpuOneInstalledOverTheGpuOneFailsAndTheFixReinstallsTheGpuOneAlone) {
  install_twin("onnxruntime-gpu", 2000);
  install_twin("onnxruntime", 1000);
  core_of_size(1000);  // onnxruntime's: installed last
  const CheckReport report = check({"RTX 4090"});
  EXPECT_EQ(report.verdict, OverallVerdict::fails);
  const StackResult* onnx = onnx_stack(report);
  ASSERT_NE(onnx, nullptr);
  EXPECT_EQ(onnx->verdict, Verdict::no_cuda_build);
  EXPECT_NE(onnx->evidence.find("onnxruntime 1.31.1 (CPU-only) was installed over "
                                "onnxruntime-gpu 1.31.1"),
            std::string::npos)
      << onnx->evidence;
  EXPECT_NE(onnx->evidence.find("onnxruntime_pybind11_state.so"), std::string::npos);
  ASSERT_EQ(onnx->fix.commands.size(), 2u) << onnx->fix.summary;
  // Removing only the CPU one would delete the files both wrote.
  EXPECT_NE(onnx->fix.commands[0].find("-m pip uninstall -y onnxruntime onnxruntime-gpu"),
            std::string::npos)
      << onnx->fix.commands[0];
  EXPECT_NE(onnx->fix.commands[1].find("-m pip install onnxruntime-gpu==1.31.1"), std::string::npos)
      << onnx->fix.commands[1];
  EXPECT_EQ(archfit::check::check_document(report)["stacks"][0]["verdict"], "no-cuda-build");
}

TEST_F(CpuTwins, WithTheGpuOneInstalledLastCudaWorksAndTheReportWarns) {
  install_twin("onnxruntime-gpu", 2000);
  install_twin("onnxruntime", 1000);
  core_of_size(2000);
  const CheckReport report = check({"RTX 4090"});
  EXPECT_EQ(onnx_stack(report), nullptr);
  EXPECT_NE(report.verdict, OverallVerdict::fails);
  EXPECT_NE(findings(report).find("onnxruntime-gpu was installed last"), std::string::npos)
      << findings(report);
  // A module neither RECORD describes: said, never guessed.
  core_of_size(1500);
  const CheckReport unclear = check({"RTX 4090"});
  EXPECT_EQ(onnx_stack(unclear), nullptr);
  EXPECT_NE(findings(unclear).find("could not be told"), std::string::npos) << findings(unclear);
}

TEST_F(CpuTwins, TheCpuOneAloneFailsWhereAnInstalledPackageRequiresTheGpuOne) {
  install_twin("onnxruntime", 1000);
  core_of_size(1000);
  EXPECT_EQ(onnx_stack(check({"RTX 4090"})), nullptr);  // nothing asks for CUDA
  site_->write("rembg-2.0.0.dist-info/METADATA",
               "Metadata-Version: 2.1\nName: rembg\nVersion: 2.0.0\n"
               "Requires-Dist: onnxruntime-gpu\nRequires-Dist: onnxruntime; extra == \"cpu\"\n");
  site_->write("rembg-2.0.0.dist-info/RECORD", "");
  const CheckReport report = check({"RTX 4090"});
  const StackResult* onnx = onnx_stack(report);
  ASSERT_NE(onnx, nullptr);
  EXPECT_EQ(onnx->verdict, Verdict::no_cuda_build);
  EXPECT_NE(onnx->evidence.find("rembg 2.0.0 requires onnxruntime-gpu"), std::string::npos)
      << onnx->evidence;
  // Without a GPU nothing is judged.
  EXPECT_EQ(onnx_stack(check({})), nullptr);
}

}  // namespace
