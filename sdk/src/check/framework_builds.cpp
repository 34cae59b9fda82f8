#include "framework_builds.hpp"

#include <algorithm>

namespace archfit::check {

namespace {

// "a CPU-only build", or "a ROCm (HIP 6.2) build": what the build is instead.
std::string what_it_is(const env::TorchBuild& torch) {
  if (!torch.hip.empty()) return "a ROCm build (HIP " + torch.hip + ") for AMD GPUs";
  return "a CPU-only build";
}

void mark(StackResult& stack, const env::TorchBuild& torch, const std::string& where,
          const CheckReport& report) {
  stack.verdict = compat::Verdict::no_cuda_build;
  stack.per_device.assign(report.devices.size(), compat::Verdict::no_cuda_build);
  stack.device = report.devices.front().name;
  stack.version = torch.version;
  stack.evidence =
      "torch " + torch.version + " is " + what_it_is(torch) + " (" + where + ": cuda = None)";
  stack.explanation = "it never uses the " + report.devices.front().name +
                      ": everything runs on the CPU, and ComfyUI stops with \"Torch not "
                      "compiled with CUDA enabled\"";
}

void judge_one(const env::TorchBuild& torch, const std::vector<std::string>& members,
               const std::string& where, CheckReport& report) {
  if (!torch.cuda.empty()) return;
  auto stack = std::find_if(report.stacks.begin(), report.stacks.end(),
                            [](const StackResult& s) { return s.anchor == "torch"; });
  if (stack == report.stacks.end()) {
    StackResult added;
    added.name = "PyTorch";
    added.anchor = "torch";
    added.kind = env::ComponentKind::distribution;
    added.members = members;
    report.stacks.push_back(std::move(added));
    stack = report.stacks.end() - 1;
  }
  mark(*stack, torch, where, report);
}

}  // namespace

void judge_framework_builds(const std::vector<env::SitePackages>& sites,
                            const std::vector<env::Wheel>& wheels, CheckReport& report) {
  if (report.devices.empty()) return;
  for (const auto& site : sites) {
    if (!site.torch) continue;
    std::vector<std::string> members = {"torch"};
    for (const char* companion : {"torchvision", "torchaudio"})
      if (const auto* dist = site.find(companion)) members.push_back(dist->name);
    judge_one(*site.torch, members, site.torch->version_file.string(), report);
    return;  // the first torch on the path is the one imported
  }
  for (const auto& wheel : wheels) {
    if (wheel.torch)
      judge_one(*wheel.torch, {"torch"}, wheel.path.filename().string() + "!/torch/version.py",
                report);
  }
}

}  // namespace archfit::check
