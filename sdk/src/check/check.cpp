#include "check.hpp"

#include <algorithm>
#include <future>
#include <map>
#include <tuple>

#include "advise.hpp"
#include "binary/archive_scan.hpp"
#include "binary/parallel.hpp"
#include "binary/tree_scan.hpp"
#include "confirm.hpp"
#include "env/cuda_driver.hpp"
#include "env/python_env.hpp"
#include "kb/kb_error.hpp"
#include "kb/knowledge_base.hpp"
#include "loaded_variant.hpp"

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

// The devices to judge against: those named with --gpu, else every real GPU.
// Without either, the report says so and judges nothing.
void choose_devices(const CheckOptions& options, const kb::KnowledgeBase& kb, CheckReport& report) {
  for (const auto& name : options.gpus) {
    try {
      const auto gpu = kb.resolve_gpu(name);
      report.devices.push_back(DeviceInfo{gpu.name, gpu.cc, true, 0, -1});
    } catch (const kb::KbError& error) {
      throw CheckError(std::string("--gpu: ") + error.what());
    }
  }
  // Devices and driver both simulated: nothing the real driver says is used,
  // so do not load it (cuInit inside a host process starts threads).
  if (!options.gpus.empty() && options.driver) return;
  env::DriverProbeOptions probe_options;
  probe_options.library = options.libcuda;
  const env::DriverProbe probe = env::probe_driver(probe_options);
  report.driver.version = probe.release;
  report.driver.cuda_version = probe.cuda_version_string();
  if (!options.gpus.empty()) return;
  for (const auto& gpu : probe.devices) {
    report.devices.push_back(
        DeviceInfo{gpu.name,
                   {static_cast<uint32_t>(gpu.cc_major), static_cast<uint32_t>(gpu.cc_minor)},
                   false,
                   gpu.total_memory,
                   gpu.ordinal});
  }
  if (report.devices.empty()) {
    report.findings.insert(report.findings.end(), probe.findings.begin(), probe.findings.end());
    report.findings.push_back(
        "No GPU to judge against: pass --gpu NAME (e.g. --gpu \"RTX 5090\") to ask about one.");
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

// Each --wheel: its name, version and tags, read from inside it. The scan
// opens it again for its libraries (scan_tree reads named wheels).
void read_wheels(const CheckOptions& options, CheckReport& report, std::vector<fs::path>& roots) {
  for (const auto& path : options.wheels) {
    if (!fs::is_regular_file(path)) throw CheckError("no wheel file at " + path.string());
    if (!binary::is_wheel(path)) throw CheckError(path.string() + " is not a wheel (a .whl file)");
    env::Wheel wheel = env::read_wheel(path);
    for (const auto& problem : wheel.problems) report.findings.push_back(problem.message);
    if (!wheel.targets_linux()) {
      report.findings.push_back(path.filename().string() + " is built for " + wheel.tags.front() +
                                ", not Linux; archfit reads Linux ELF libraries, so its "
                                "Windows or macOS binaries were not judged.");
    }
    if (wheel.torch && !report.torch) report.torch = wheel.torch->version;
    roots.push_back(path);
    report.wheels.push_back(std::move(wheel));
  }
}

// A member of a --wheel ("x.whl!/pkg/lib.so") belongs to that wheel's
// distribution; an empty name when the file is not in a wheel.
env::Component wheel_component(const std::vector<env::Wheel>& wheels, const std::string& path) {
  for (const auto& wheel : wheels) {
    const std::string prefix = wheel.path.string() + std::string(binary::kMemberSeparator);
    if (path.starts_with(prefix))
      return {env::ComponentKind::distribution, wheel.name, wheel.version, wheel.path};
  }
  return {};
}

// Who owns a binary: the --wheel it came from, else the first site-packages
// whose RECORD lists it, else its custom-node pack or the file itself.
env::Component attribute(const std::string& path, const std::vector<env::Wheel>& wheels,
                         const std::vector<env::SitePackages>& sites,
                         const std::optional<fs::path>& custom_nodes) {
  if (auto component = wheel_component(wheels, path); !component.name.empty()) return component;
  env::Component component = env::attribute(path, nullptr, custom_nodes);
  for (const auto& site : sites) {
    component = env::attribute(path, &site, custom_nodes);
    if (component.kind == env::ComponentKind::distribution) break;
  }
  return component;
}

// A binary judged on each device; its judgement is the one on the device
// where it fares worst (the first such device on a tie).
BinaryResult judge_on_every_device(const binary::FileScan& file,
                                   const std::vector<DeviceInfo>& devices,
                                   const compat::Driver& driver) {
  BinaryResult result;
  result.path = file.path;
  for (size_t d = 0; d < devices.size(); ++d) {
    compat::BinaryJudgement judgement = compat::judge_binary(file, devices[d].cc, driver);
    result.per_device.push_back(judgement.verdict);
    result.chosen_per_device.push_back(judgement.chosen);
    if (d == 0 || compat::badness(judgement.verdict) > compat::badness(result.judgement.verdict)) {
      result.judgement = std::move(judgement);
      result.judged_on = d;
    }
  }
  return result;
}

// The worst of the binaries the package can load (compat's rule over those
// only); nullopt when none.
std::optional<size_t> worst_binary_of(const ComponentResult& result) {
  std::vector<size_t> loaded;
  std::vector<compat::BinaryJudgement> judgements;
  for (size_t i = 0; i < result.binaries.size(); ++i) {
    if (!result.binaries[i].not_loaded.empty()) continue;
    loaded.push_back(i);
    judgements.push_back(result.binaries[i].judgement);
  }
  const auto worst = compat::worst_binary(judgements);
  return worst ? std::optional<size_t>(loaded[*worst]) : std::nullopt;
}

// A component's verdict on each device is its worst binary's there; its
// overall verdict, evidence, explanation and device are those of its worst
// binary on that binary's worst device. Returns that binary's index.
std::optional<size_t> aggregate(ComponentResult& result, const std::vector<DeviceInfo>& devices) {
  result.per_device.assign(devices.size(), compat::Verdict::no_device_code);
  for (size_t d = 0; d < devices.size(); ++d) {
    for (const auto& binary : result.binaries) {
      if (binary.not_loaded.empty() &&
          compat::badness(binary.per_device[d]) > compat::badness(result.per_device[d]))
        result.per_device[d] = binary.per_device[d];
    }
  }
  const auto worst = worst_binary_of(result);
  if (devices.empty() || !worst) {
    result.verdict = compat::Verdict::no_device_code;
    return std::nullopt;
  }
  const BinaryResult& binary = result.binaries[*worst];
  result.verdict = binary.judgement.verdict;
  result.evidence = binary.judgement.evidence;
  result.explanation = binary.judgement.explanation;
  result.device = devices[binary.judged_on].name;
  return worst;
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
  choose_devices(options, kb, report);
  choose_driver(options, kb, report);

  std::vector<env::SitePackages> sites;
  std::vector<fs::path> roots;
  std::string torch_cuda;  // "12.4": which per-CUDA library copies a process loads
  for (const auto& dir : options.site_packages) {
    sites.push_back(env::read_site_packages(dir));
    for (const auto& problem : sites.back().problems) report.findings.push_back(problem.message);
    if (sites.back().torch && !report.torch) {
      report.torch = sites.back().torch->version;
      torch_cuda = sites.back().torch->cuda;
    }
    roots.push_back(dir);
  }
  report.libraries =
      env::find_cuda_libraries(env::default_cuda_library_search(options.site_packages), sites);
  note_mixed_runtimes(report);
  if (options.custom_nodes) roots.push_back(*options.custom_nodes);
  read_wheels(options, report, roots);
  for (const auto& wheel : report.wheels) {
    if (wheel.torch && torch_cuda.empty()) torch_cuda = wheel.torch->cuda;
  }
  roots.insert(roots.end(), options.paths.begin(), options.paths.end());
  if (roots.empty() && options.probe_only_when_nothing_to_scan) return report;  // verdict unknown
  if (roots.empty())
    throw CheckError(
        "nothing to check: give --site-packages DIR, --venv DIR, --custom-nodes DIR, --wheel FILE "
        "or paths");
  // Plugins load while the environment is scanned: torch_probe alone loads
  // libtorch (about 0.6 s here), which the scan of a big environment hides.
  std::future<plugin::PluginSet> plugins;
  if (options.plugins)
    plugins = std::async(std::launch::async, plugin::load_plugins, *options.plugins);

  binary::TreeScanOptions scan_options;
  scan_options.threads = options.threads;
  scan_options.on_progress = options.on_progress;
  const binary::TreeScan scan = binary::scan_tree(roots, scan_options);

  const compat::Driver driver{report.driver.version, report.driver.max_ptx_isa};
  std::map<ComponentKey, ComponentResult> grouped;
  std::map<ComponentKey, std::vector<const binary::FileScan*>> scans;
  for (const auto& file : scan.files) {
    if (!file.problems.empty())
      report.findings.push_back(file.path + ": " + file.problems.front().message);
    if (!file.has_device_code()) continue;
    const env::Component component =
        attribute(file.path, report.wheels, sites, options.custom_nodes);
    const ComponentKey key{component.kind, component.name, component.root.string()};
    auto& result = grouped[key];
    result.component = component;
    result.binaries.push_back(judge_on_every_device(file, report.devices, driver));
    scans[key].push_back(&file);
  }

  for (auto& [key, result] : grouped) {
    if (key.kind != env::ComponentKind::distribution) continue;
    if (const kb::Component* knowledge = kb.component_for(key.name))
      mark_unloaded_variants(result, *knowledge, torch_cuda, report.findings);
  }
  if (options.confirm) {
    std::vector<ConfirmItem> items;
    for (auto& [key, result] : grouped) {
      for (size_t b = 0; b < result.binaries.size(); ++b) {
        if (result.binaries[b].not_loaded.empty())
          items.push_back({&result.binaries[b], scans[key][b]});
      }
    }
    confirm_with_driver(items, options.libcuda, report);
  }

  for (auto& [key, result] : grouped) {
    if (const auto worst = aggregate(result, report.devices)) {
      const BinaryResult& binary = result.binaries[*worst];
      result.fix = advise(result, binary.judgement, scans[key][*worst],
                          report.devices[binary.judged_on], report.devices, kb);
    }
    report.components.push_back(std::move(result));
  }
  if (plugins.valid()) {
    report.probes = read_probes(plugins.get(), report.devices, report.findings);
    if (report.torch) note_other_torch(report.probes, *report.torch, options.site_packages);
  }
  std::stable_sort(report.components.begin(), report.components.end(),
                   [](const ComponentResult& a, const ComponentResult& b) {
                     return std::tuple(compat::badness(b.verdict), a.component.name) <
                            std::tuple(compat::badness(a.verdict), b.component.name);
                   });

  if (report.devices.empty()) {
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
