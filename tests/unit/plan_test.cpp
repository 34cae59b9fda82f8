#include "render/plan_script.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "report_by_hand.hpp"

using archfit::check::CheckReport;
using archfit::check::StackResult;
using archfit::compat::Verdict;
using archfit::render::render_plan;
using archfit::render::shell_quote;

namespace {

// The plan replaces what fails stack by stack: the PyTorch stack's one
// command (which also removes an xformers that cannot follow it) and a pack's
// rebuild; a stack that runs gets no step.
CheckReport failing_report() {
  CheckReport report = archfit::testing::report_on_device("GeForce RTX 5090", {12, 0});
  StackResult torch = archfit::testing::pytorch_stack("2.5.1+cu124", Verdict::no_image);
  torch.fix.summary = "Install torch 2.8.0+cu128";
  torch.fix.commands = {"pip uninstall -y xformers",
                        "pip install torch==2.8.0 torchvision==0.23.0"};
  StackResult pack;
  pack.name = "Pack's Nodes";
  pack.kind = archfit::env::ComponentKind::custom_node;
  pack.verdict = Verdict::no_image;
  pack.fix = {"Rebuild",
              {"cd \"/x/custom_nodes/Pack's Nodes\" && TORCH_CUDA_ARCH_LIST=\"12.0\" pip install "
               "--no-build-isolation ."}};
  StackResult fine;
  fine.name = "xformers";
  fine.version = "0.0.30";
  fine.verdict = Verdict::native;
  fine.fix = {"never shown", {"pip install xformers==0.0.99"}};
  report.stacks = {torch, pack, fine};
  report.verdict = archfit::check::OverallVerdict::fails;
  return report;
}

}  // namespace

TEST(Plan, BacksUpThenReplacesEachFailureWithTheEnvironmentsPipThenChecksAgain) {
  const std::string plan =
      render_plan(failing_report(), {"/venv/bin/python", {{"--gpu", "RTX 5090"}}});
  EXPECT_EQ(plan.rfind("#!/bin/sh\n", 0), 0u);
  // The interpreter single-quoted: a path holding $(…) stays a path.
  EXPECT_NE(plan.find("if [ -z \"${PYTHON:-}\" ]; then PYTHON='/venv/bin/python'; fi"),
            std::string::npos)
      << plan;
  const auto backup = plan.find("\"$PYTHON\" -m pip freeze > \"$backup\"");
  const auto uninstall = plan.find("\"$PYTHON\" -m pip uninstall -y xformers");
  const auto torch = plan.find("\"$PYTHON\" -m pip install torch==2.8.0 torchvision==0.23.0");
  const auto pack =
      plan.find("TORCH_CUDA_ARCH_LIST=\"12.0\" \"$PYTHON\" -m pip install --no-build-isolation .");
  const auto verify = plan.find("archfit check --gpu 'RTX 5090'");
  ASSERT_NE(backup, std::string::npos) << plan;
  ASSERT_NE(torch, std::string::npos) << plan;
  ASSERT_NE(pack, std::string::npos) << plan;
  ASSERT_NE(verify, std::string::npos) << plan;
  ASSERT_NE(uninstall, std::string::npos) << plan;
  EXPECT_LT(backup, uninstall);
  EXPECT_LT(uninstall, torch);
  EXPECT_LT(torch, verify);
  EXPECT_EQ(plan.find("0.0.99"), std::string::npos) << "a stack that runs needs no step";
}

TEST(Plan, IsAValidShellScript) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("archfit_plan_" + std::to_string(::getpid()) + ".sh");
  std::ofstream(path) << render_plan(failing_report(), {"", {{"--gpu", "it's"}}});
  const int status = std::system(("sh -n " + path.string()).c_str());
  std::filesystem::remove(path);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "sh -n rejected the plan";
}

TEST(Plan, ShellQuotingSurvivesQuotesAndSpaces) {
  EXPECT_EQ(shell_quote("RTX 5090"), "'RTX 5090'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
}

// Issue 33: a Windows environment's fixes are cmd lines for its own
// python.exe (check/environment_commands); its plan is a .bat file that runs
// them in order and stops at the first that fails, with CRLF line ends.
TEST(Plan, AWindowsEnvironmentsPlanIsABatchFileForCmd) {
  CheckReport report = failing_report();
  const std::string python = "\"C:\\ComfyUI_windows_portable\\python_embeded\\python.exe\"";
  report.stacks[0].verdict = Verdict::no_cuda_build;
  report.stacks[0].fix.commands = {python +
                                   " -m pip install torch==2.8.0+cu128 --index-url "
                                   "https://download.pytorch.org/whl/cu128"};
  report.stacks[0].fix.shell = "cmd";
  report.stacks[1].fix.commands = {};
  report.stacks[1].fix.shell = "cmd";
  const std::string plan =
      render_plan(report, {"/mnt/c/ComfyUI_windows_portable/python_embeded/python.exe", {}});
  EXPECT_EQ(plan.rfind("@echo off\r\n", 0), 0u) << plan;
  EXPECT_NE(plan.find(python + " -m pip freeze > archfit-backup.txt || exit /b 1\r\n"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("rem PyTorch 2.5.1+cu124: no-cuda-build.\r\n" + python +
                      " -m pip install torch==2.8.0+cu128 --index-url "
                      "https://download.pytorch.org/whl/cu128 || exit /b 1\r\n"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("rem   (no command: Rebuild)\r\n"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("#!/bin/sh"), std::string::npos);
  EXPECT_EQ(plan.find("xformers==0.0.99"), std::string::npos);  // a stack that runs
  for (size_t at = plan.find('\n'); at != std::string::npos; at = plan.find('\n', at + 1))
    EXPECT_EQ(plan[at - 1], '\r') << "a line without CR at " << at;
}

// The check it runs again is cmd's too: double quotes where a word needs
// them (cmd reads '…' as part of the word), paths as Windows names them.
// Found under Wine (issue 35): the .bat plan ended with sh's quoting.
TEST(Plan, TheBatchFilesCheckAgainIsQuotedForCmd) {
  CheckReport report = failing_report();
  report.stacks[0].fix.shell = "cmd";
  report.stacks[1].fix.shell = "cmd";
  const std::string plan = render_plan(
      report, {"C:\\venv\\Scripts\\python.exe",
               {{"--gpu", "RTX 5090"},
                {"--site-packages", "/mnt/c/Users/O'Brien/venv/Lib/site-packages", true}}});
  EXPECT_NE(plan.find("\r\narchfit check --gpu \"RTX 5090\" --site-packages "
                      "\"C:\\Users\\O'Brien\\venv\\Lib\\site-packages\"\r\n"),
            std::string::npos)
      << plan;
  const std::string sh = render_plan(failing_report(), {"", {{"--gpu", "RTX 5090"}}});
  EXPECT_NE(sh.find("\narchfit check --gpu 'RTX 5090'\n"), std::string::npos) << sh;
}

// Issue 34 row 4a: cmd.exe expands %NAME% and %~… on every line of a .bat
// file, `rem` lines included; %% is its literal %. A portable folder named
// with a % is written doubled wherever the plan names it, so the plan runs
// that folder's python.exe, not the path an expansion would make.
TEST(Plan, APercentInAWindowsPathIsDoubledEverywhereInTheBatchFile) {
  CheckReport report = failing_report();
  report.stacks[0].verdict = Verdict::no_cuda_build;
  report.stacks[0].fix.commands = {};
  report.stacks[0].fix.summary = "Install torch in C:\\a%PATH%b";
  report.stacks[0].fix.shell = "cmd";
  report.stacks[1].fix.shell = "cmd";
  const std::string plan = render_plan(report, {"/mnt/c/a%PATH%b/python_embeded/python.exe",
                                                {{"--comfyui", "/mnt/c/a%PATH%b", true}}});
  EXPECT_NE(plan.find("\"C:\\a%%PATH%%b\\python_embeded\\python.exe\" -m pip freeze"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("rem   (no command: Install torch in C:\\a%%PATH%%b)"), std::string::npos)
      << plan;
  EXPECT_NE(plan.find("archfit check --comfyui \"C:\\a%%PATH%%b\""), std::string::npos) << plan;
  // Every % of the plan is one of a doubled pair.
  size_t single = 0;
  for (size_t at = 0; at < plan.size(); ++at) {
    if (plan[at] != '%') continue;
    if (at + 1 < plan.size() && plan[at + 1] == '%') {
      ++at;
    } else {
      ++single;
    }
  }
  EXPECT_EQ(single, 0u) << plan;
}
