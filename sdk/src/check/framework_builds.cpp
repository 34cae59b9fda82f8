#include "framework_builds.hpp"
#include "sys/utf8_path.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

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

// The stack a CPU twin's CUDA distribution is judged in, added when its
// binaries gave it none (or it is not installed at all).
StackResult& twin_stack(const kb::CpuTwin& twin, CheckReport& report) {
  auto stack = std::find_if(report.stacks.begin(), report.stacks.end(), [&](const StackResult& s) {
    return s.anchor == twin.cuda ||
           std::find(s.members.begin(), s.members.end(), twin.cuda) != s.members.end();
  });
  if (stack != report.stacks.end()) return *stack;
  StackResult added;
  added.kind = env::ComponentKind::distribution;
  added.members = {twin.cuda};
  report.stacks.push_back(std::move(added));
  return report.stacks.back();
}

void mark_twin(const kb::CpuTwin& twin, const std::string& version, const std::string& evidence,
               CheckReport& report) {
  StackResult& stack = twin_stack(twin, report);
  for (auto& component : report.components) {  // judged under the stack's old name
    if (!stack.name.empty() && component.stack == stack.name) component.stack = twin.name;
  }
  stack.name = twin.name;
  stack.anchor = twin.cuda;
  if (std::find(stack.members.begin(), stack.members.end(), twin.cpu) == stack.members.end())
    stack.members.push_back(twin.cpu);
  stack.verdict = compat::Verdict::no_cuda_build;
  stack.per_device.assign(report.devices.size(), compat::Verdict::no_cuda_build);
  stack.device = report.devices.front().name;
  stack.version = version;
  stack.evidence = evidence;
  stack.explanation = "it never uses the " + report.devices.front().name + ": " + twin.name +
                      " offers only its CPU execution provider, and a model asked to run on "
                      "CUDA runs on the CPU or stops";
}

// Whose `core` module is on disk: the twin whose RECORD gives the file's
// size. `cpu_last` is nullopt when neither (or both) do.
struct CoreOnDisk {
  std::optional<bool> cpu_last;
  std::filesystem::path file;
};

CoreOnDisk core_on_disk(const kb::CpuTwin& twin, const env::SitePackages& site,
                        const env::Distribution& cpu, const env::Distribution& cuda) {
  const auto core = [&](std::string_view path) { return kb::glob_matches(twin.core, path); };
  const auto cpu_row = env::recorded_size(cpu, core);
  const auto cuda_row = env::recorded_size(cuda, core);
  if (!cpu_row || !cuda_row || cpu_row->size == cuda_row->size) return {};
  CoreOnDisk found{std::nullopt, site.root / sys::path_of_utf8(cpu_row->path)};
  std::error_code error;
  const auto on_disk = std::filesystem::file_size(found.file, error);
  if (error) return found;
  if (on_disk == cpu_row->size) found.cpu_last = true;
  if (on_disk == cuda_row->size) found.cpu_last = false;
  return found;
}

void judge_cpu_twins(const env::SitePackages& site, const kb::KnowledgeBase& kb,
                     CheckReport& report) {
  for (const auto& twin : kb.packages().cpu_twins) {
    const env::Distribution* cpu = site.find(twin.cpu);
    if (!cpu) continue;
    const env::Distribution* cuda = site.find(twin.cuda);
    const std::string cpu_words = twin.cpu + " " + cpu->version + " (CPU-only)";
    if (cuda) {
      const auto core = core_on_disk(twin, site, *cpu, *cuda);
      if (core.cpu_last == true) {
        mark_twin(twin, cuda->version,
                  cpu_words + " was installed over " + twin.cuda + " " + cuda->version +
                      " and replaced its CUDA build (" + core.file.string() + " is " + twin.cpu +
                      "'s, by the size its RECORD gives)",
                  report);
      } else if (core.cpu_last == false) {
        report.findings.push_back(
            cpu_words + " is installed beside " + twin.cuda + " " + cuda->version + " in " +
            site.root.string() + ". CUDA works: " + twin.cuda +
            " was installed last. Installing or removing " + twin.cpu + " alone would break it.");
      } else {
        report.findings.push_back(cpu_words + " and " + twin.cuda + " " + cuda->version +
                                  " are both installed in " + site.root.string() +
                                  "; which one's files are on disk could not be told, so whether " +
                                  twin.name + " uses CUDA is unknown.");
      }
      continue;
    }
    for (const auto& dist : site.distributions) {
      const auto requires_cuda = std::any_of(
          dist.requirements.begin(), dist.requirements.end(),
          [&](const env::Requirement& r) { return r.name == twin.cuda && r.when_extra.empty(); });
      if (!requires_cuda) continue;
      mark_twin(twin, cpu->version,
                dist.name + " " + dist.version + " requires " + twin.cuda + ", but only " +
                    cpu_words + " is installed",
                report);
      break;
    }
  }
}

}  // namespace

void judge_framework_builds(const std::vector<env::SitePackages>& sites,
                            const std::vector<env::Wheel>& wheels, const kb::KnowledgeBase& kb,
                            CheckReport& report) {
  if (report.devices.empty()) return;
  if (!sites.empty()) judge_cpu_twins(sites.front(), kb, report);
  for (const auto& site : sites) {
    if (!site.torch) continue;
    std::vector<std::string> members = {"torch"};
    if (const auto* rule = kb.packages().stack_of("torch")) {
      for (const auto& member : rule->members)  // torchvision, torchaudio, triton(-windows)
        if (const auto* dist = site.find(member)) members.push_back(dist->name);
    }
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
