#include "check.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "advise.hpp"
#include "binary/parallel.hpp"
#include "binary/tree_scan.hpp"
#include "env/cuda_driver.hpp"
#include "env/python_env.hpp"
#include "kb/kb_error.hpp"
#include "kb/knowledge_base.hpp"

namespace archfit::check {

namespace fs = std::filesystem;

std::string_view to_string(OverallVerdict verdict) {
  switch (verdict) {
    case OverallVerdict::fits:
      return "fits";
    case OverallVerdict::fails:
      return "fails";
    case OverallVerdict::unknown:
      break;
  }
  return "unknown";
}

namespace {

kb::KnowledgeBase load_kb(const CheckOptions& options) {
  try {
    return kb::load_knowledge_base(kb::resolve_kb_dir(options.kb_dir));
  } catch (const kb::KbError& error) {
    throw CheckError(std::string("the knowledge base could not be read: ") + error.what());
  }
}

// The device to judge against: the one named with --gpu, else the first real
// GPU. Without either, the report says so and judges nothing.
void choose_device(const CheckOptions& options, const kb::KnowledgeBase& kb, CheckReport& report) {
  if (options.gpu) {
    try {
      const auto gpu = kb.resolve_gpu(*options.gpu);
      report.device = DeviceInfo{gpu.name, gpu.cc, true, 0};
    } catch (const kb::KbError& error) {
      throw CheckError(std::string("--gpu: ") + error.what());
    }
    // Device and driver both simulated: nothing the real driver says is used,
    // so do not load it (cuInit inside a host process starts threads).
    if (options.driver) return;
  }
  env::DriverProbeOptions probe_options;
  probe_options.library = options.libcuda;
  const env::DriverProbe probe = env::probe_driver(probe_options);
  report.driver.version = probe.release;
  report.driver.cuda_version = probe.cuda_version_string();
  if (!report.device) {
    if (probe.usable()) {
      const auto& gpu = probe.devices.front();
      report.device =
          DeviceInfo{gpu.name,
                     {static_cast<uint32_t>(gpu.cc_major), static_cast<uint32_t>(gpu.cc_minor)},
                     false,
                     gpu.total_memory};
      if (probe.devices.size() > 1) {
        report.findings.push_back(std::to_string(probe.devices.size()) +
                                  " GPUs found; judging against GPU 0 (" + gpu.name +
                                  "). Use --gpu to ask about another.");
      }
    } else {
      report.findings.insert(report.findings.end(), probe.findings.begin(), probe.findings.end());
      report.findings.push_back(
          "No GPU to judge against: pass --gpu NAME (e.g. --gpu \"RTX 5090\") to ask about one.");
    }
  }
}

void choose_driver(const CheckOptions& options, const kb::KnowledgeBase& kb, CheckReport& report) {
  if (options.driver) {
    report.driver.version = *options.driver;
    report.driver.cuda_version.clear();
    report.driver.simulated = true;
  }
  if (report.driver.version.empty()) return;
  try {
    report.driver.max_ptx_isa = kb.max_ptx_isa_for_driver(report.driver.version);
  } catch (const kb::KbError& error) {
    throw CheckError(std::string("--driver: ") + error.what());
  }
}

// Two CUDA runtimes of different majors on one machine is how a process
// ends up with the wrong one; say so, naming both.
void note_mixed_runtimes(CheckReport& report) {
  std::map<std::string, std::string> first_by_major;  // "12" -> where
  for (const auto& library : report.libraries) {
    if (library.name != "cudart" || library.version.empty()) continue;
    const std::string major = library.version.substr(0, library.version.find('.'));
    first_by_major.try_emplace(major, library.path.string() + " (" + library.origin + ")");
  }
  if (first_by_major.size() < 2) return;
  std::string list;
  for (const auto& [major, where] : first_by_major)
    list += (list.empty() ? "" : "; ") + ("CUDA " + major + ": " + where);
  report.findings.push_back(
      "More than one CUDA runtime major is installed (" + list +
      "); which one a library loads depends on its RPATH and LD_LIBRARY_PATH.");
}

struct ComponentKey {
  env::ComponentKind kind;
  std::string name;
  std::string root;
  auto operator<=>(const ComponentKey&) const = default;
};

}  // namespace

CheckReport run_check(const CheckOptions& options) {
  const kb::KnowledgeBase kb = load_kb(options);
  CheckReport report;
  choose_device(options, kb, report);
  choose_driver(options, kb, report);

  std::vector<env::SitePackages> sites;
  std::vector<fs::path> roots;
  for (const auto& dir : options.site_packages) {
    sites.push_back(env::read_site_packages(dir));
    for (const auto& problem : sites.back().problems) report.findings.push_back(problem.message);
    if (sites.back().torch && !report.torch) report.torch = sites.back().torch->version;
    roots.push_back(dir);
  }
  report.libraries =
      env::find_cuda_libraries(env::default_cuda_library_search(options.site_packages));
  note_mixed_runtimes(report);
  if (options.custom_nodes) roots.push_back(*options.custom_nodes);
  roots.insert(roots.end(), options.paths.begin(), options.paths.end());
  if (roots.empty())
    throw CheckError(
        "nothing to check: give --site-packages DIR, --venv DIR, --custom-nodes DIR or paths");

  binary::TreeScanOptions scan_options;
  scan_options.threads = options.threads;
  const binary::TreeScan scan = binary::scan_tree(roots, scan_options);

  const compat::Driver driver{report.driver.version, report.driver.max_ptx_isa};
  std::map<ComponentKey, ComponentResult> grouped;
  std::map<ComponentKey, std::vector<const binary::FileScan*>> scans;
  for (const auto& file : scan.files) {
    if (!file.problems.empty())
      report.findings.push_back(file.path + ": " + file.problems.front().message);
    if (!file.has_device_code()) continue;
    env::Component component;
    for (const auto& site : sites) {
      component = env::attribute(file.path, &site, options.custom_nodes);
      if (component.kind == env::ComponentKind::distribution) break;
    }
    if (sites.empty()) component = env::attribute(file.path, nullptr, options.custom_nodes);
    const ComponentKey key{component.kind, component.name, component.root.string()};
    auto& result = grouped[key];
    result.component = component;
    BinaryResult binary{file.path, {}};
    if (report.device) binary.judgement = compat::judge_binary(file, report.device->cc, driver);
    result.binaries.push_back(std::move(binary));
    scans[key].push_back(&file);
  }

  for (auto& [key, result] : grouped) {
    std::vector<compat::BinaryJudgement> judgements;
    for (const auto& binary : result.binaries) judgements.push_back(binary.judgement);
    const auto worst = compat::worst_binary(judgements);
    if (!report.device || !worst) {
      result.verdict = compat::Verdict::no_device_code;
    } else {
      const auto& judgement = judgements[*worst];
      result.verdict = judgement.verdict;
      result.evidence = judgement.evidence;
      result.explanation = judgement.explanation;
      result.fix = advise(result, judgement, scans[key][*worst], *report.device, kb);
    }
    report.components.push_back(std::move(result));
  }
  std::stable_sort(report.components.begin(), report.components.end(),
                   [](const ComponentResult& a, const ComponentResult& b) {
                     return std::tuple(compat::badness(b.verdict), a.component.name) <
                            std::tuple(compat::badness(a.verdict), b.component.name);
                   });

  if (!report.device) {
    report.verdict = OverallVerdict::unknown;
  } else {
    const bool fails =
        std::any_of(report.components.begin(), report.components.end(),
                    [](const ComponentResult& c) { return compat::is_failure(c.verdict); });
    report.verdict = fails ? OverallVerdict::fails : OverallVerdict::fits;
  }
  return report;
}

}  // namespace archfit::check
