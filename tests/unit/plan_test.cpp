#include "check/plan.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using archfit::check::CheckReport;
using archfit::check::ComponentResult;
using archfit::check::render_plan;
using archfit::check::shell_quote;
using archfit::compat::Verdict;

namespace {

CheckReport failing_report() {
  CheckReport report;
  report.devices = {archfit::check::DeviceInfo{"GeForce RTX 5090", {12, 0}, true, 0, -1}};
  ComponentResult torch;
  torch.component = {archfit::env::ComponentKind::distribution, "torch", "2.5.1+cu124", {}};
  torch.verdict = Verdict::no_image;
  torch.fix = {"Install torch 2.7.0+cu128",
               {"pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cu128"}};
  ComponentResult pack;
  pack.component = {archfit::env::ComponentKind::custom_node, "Pack's Nodes", "",
                    "/x/custom_nodes/Pack's Nodes"};
  pack.verdict = Verdict::no_image;
  pack.fix = {"Rebuild",
              {"cd \"/x/custom_nodes/Pack's Nodes\" && TORCH_CUDA_ARCH_LIST=\"12.0\" pip install "
               "--no-build-isolation ."}};
  ComponentResult fine;
  fine.component = {archfit::env::ComponentKind::distribution, "xformers", "0.0.30", {}};
  fine.verdict = Verdict::native;
  report.components = {torch, pack, fine};
  report.verdict = archfit::check::OverallVerdict::fails;
  return report;
}

}  // namespace

TEST(Plan, BacksUpThenReplacesEachFailureWithTheEnvironmentsPipThenChecksAgain) {
  const std::string plan =
      render_plan(failing_report(), {"/venv/bin/python", "archfit check --gpu 'RTX 5090'"});
  EXPECT_EQ(plan.rfind("#!/bin/sh\n", 0), 0u);
  EXPECT_NE(plan.find("PYTHON=\"${PYTHON:-/venv/bin/python}\""), std::string::npos) << plan;
  const auto backup = plan.find("\"$PYTHON\" -m pip freeze > \"$backup\"");
  const auto torch = plan.find(
      "\"$PYTHON\" -m pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cu128");
  const auto pack =
      plan.find("TORCH_CUDA_ARCH_LIST=\"12.0\" \"$PYTHON\" -m pip install --no-build-isolation .");
  const auto verify = plan.find("archfit check --gpu 'RTX 5090'");
  ASSERT_NE(backup, std::string::npos) << plan;
  ASSERT_NE(torch, std::string::npos) << plan;
  ASSERT_NE(pack, std::string::npos) << plan;
  ASSERT_NE(verify, std::string::npos) << plan;
  EXPECT_LT(backup, torch);
  EXPECT_LT(torch, verify);
  EXPECT_EQ(plan.find("xformers"), std::string::npos) << "a native component needs no step";
}

TEST(Plan, IsAValidShellScript) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("archfit_plan_" + std::to_string(::getpid()) + ".sh");
  std::ofstream(path) << render_plan(failing_report(),
                                     {"", "archfit check --gpu " + shell_quote("it's")});
  const int status = std::system(("sh -n " + path.string()).c_str());
  std::filesystem::remove(path);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "sh -n rejected the plan";
}

TEST(Plan, ShellQuotingSurvivesQuotesAndSpaces) {
  EXPECT_EQ(shell_quote("RTX 5090"), "'RTX 5090'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
}
