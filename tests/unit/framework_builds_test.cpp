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
      "\"" + archfit::check::windows_path(python) + "\" -m pip install torch==";
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

}  // namespace
