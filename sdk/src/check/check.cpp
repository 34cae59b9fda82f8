#include "check.hpp"

#include <algorithm>
#include <cctype>
#include <future>
#include <map>
#include <numeric>
#include <tuple>

#include <sys/utsname.h>

#include "advise.hpp"
#include "binary/archive_scan.hpp"
#include "binary/elf_linkage.hpp"
#include "binary/parallel.hpp"
#include "binary/tree_scan.hpp"
#include "confirm.hpp"
#include "env/cuda_driver.hpp"
#include "env/python_env.hpp"
#include "kb/kb_error.hpp"
#include "kb/knowledge_base.hpp"
#include "loaded_variant.hpp"
#include "reach.hpp"
#include "scan_index.hpp"
#include "stack_judge.hpp"
#include "stack_plan.hpp"
#include "summary.hpp"

namespace archfit::check {

namespace fs = std::filesystem;

std::string_view to_string(Reach reach) {
  switch (reach) {
    case Reach::loaded:
      return "loaded";
    case Reach::feature:
      return "feature";
    case Reach::unreached:
      break;
  }
  return "unreached";
}

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
    return kb::load_knowledge_base(kb::resolve_kb_dir(options.kb_dir),
                                   kb::KbParts::without_error_signatures);
  } catch (const kb::KbError& error) {
    throw CheckError(std::string("the knowledge base could not be read: ") + error.what());
  }
}

// The CPU of this machine, as ELF names it ("x86_64", "aarch64").
std::string this_machine() {
  struct utsname name {};
  if (::uname(&name) != 0) return {};
  return name.machine;
}

// The devices to judge against: those named with --gpu, else every real GPU.
// Without either, the report says so and judges nothing.
void choose_devices(const CheckOptions& options, const kb::KnowledgeBase& kb, CheckReport& report) {
  const std::string machine = this_machine();
  for (const auto& name : options.gpus) {
    try {
      const auto gpu = kb.resolve_gpu(name);
      DeviceInfo device;
      device.name = gpu.name;
      device.cc = gpu.cc;
      device.simulated = true;
      const auto* architecture = kb.architecture(gpu.cc);
      const bool jetson = architecture && architecture->platform == kb::DriverPlatform::jetson;
      device.machine = gpu.entry && !gpu.entry->machine.empty() ? gpu.entry->machine
                       : jetson                                 ? "aarch64"
                                                                : machine;
      report.devices.push_back(std::move(device));
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
    DeviceInfo device;
    device.name = gpu.name;
    device.cc = {static_cast<uint32_t>(gpu.cc_major), static_cast<uint32_t>(gpu.cc_minor)};
    device.memory = gpu.total_memory;
    device.ordinal = gpu.ordinal;
    device.machine = machine;
    report.devices.push_back(std::move(device));
  }
  if (report.devices.empty()) {
    // One sentence: why there is nothing to judge against.
    if (!probe.library) {
      report.no_gpu = "no NVIDIA driver is installed here (libcuda.so.1 cannot be loaded)";
    } else if (!probe.findings.empty()) {
      report.no_gpu = probe.findings.front();
      if (!report.no_gpu.empty() && report.no_gpu.back() == '.') report.no_gpu.pop_back();
      report.no_gpu[0] =
          static_cast<char>(std::tolower(static_cast<unsigned char>(report.no_gpu[0])));
    } else {
      report.no_gpu = "the driver reports no GPU";
    }
  }
}

void choose_driver(const CheckOptions& options, const kb::KnowledgeBase& kb, CheckReport& report) {
  if (options.driver) {
    report.driver.version = *options.driver;
    report.driver.cuda_version.clear();
    report.driver.simulated = true;
  }
  for (auto& device : report.devices) device.first_driver = kb.first_driver_for(device.cc);
  if (report.driver.version.empty()) return;
  try {
    report.driver.max_ptx_isa = kb.max_ptx_isa_for_driver(report.driver.version);
  } catch (const kb::KbError& error) {
    throw CheckError(std::string("--driver: ") + error.what());
  }
  const auto driver = kb::parse_driver_version(report.driver.version);
  for (auto& device : report.devices) {
    if (device.first_driver && driver)
      device.driver_knows_it = compat::driver_knows_device(*driver, *device.first_driver);
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

// Every folder and file the check is told to judge must be there: a
// site-packages, custom_nodes folder or path that is not would be "nothing
// to judge", which fits. (One that exists but cannot be read is a finding.)
void require_named_roots(const CheckOptions& options) {
  const auto require = [](const fs::path& path, const char* what) {
    std::error_code error;
    if (fs::symlink_status(path, error).type() == fs::file_type::not_found)
      throw CheckError(std::string(what) + " " + path.string() + ": no such file or folder");
  };
  for (const auto& dir : options.site_packages) require(dir, "site-packages");
  if (options.custom_nodes) require(*options.custom_nodes, "custom_nodes");
  for (const auto& path : options.paths) require(path, "path");
}

// Each --wheel: its name, version and tags, read from inside it. The scan
// opens it again for its libraries (scan_tree reads named wheels).
std::vector<env::Wheel> read_wheels(const CheckOptions& options,
                                    std::vector<std::string>& findings) {
  std::vector<env::Wheel> wheels;
  for (const auto& path : options.wheels) {
    if (!fs::is_regular_file(path)) throw CheckError("no wheel file at " + path.string());
    if (!binary::is_wheel(path)) throw CheckError(path.string() + " is not a wheel (a .whl file)");
    env::Wheel wheel = env::read_wheel(path);
    for (const auto& problem : wheel.problems) findings.push_back(problem.message);
    if (!wheel.targets_linux()) {
      findings.push_back(path.filename().string() + " is built for " + wheel.tags.front() +
                         ", not Linux; archfit reads Linux ELF libraries, so its "
                         "Windows or macOS binaries were not judged.");
    }
    wheels.push_back(std::move(wheel));
  }
  return wheels;
}

// `path` is one of the --wheels, or a member of one ("x.whl!/pkg/_C.so").
bool in_a_wheel(const std::string& path, const std::vector<fs::path>& wheels) {
  return std::any_of(wheels.begin(), wheels.end(), [&](const fs::path& wheel) {
    const std::string& name = wheel.native();
    return path == name ||
           (path.starts_with(name) && path.compare(name.size(), binary::kMemberSeparator.size(),
                                                   binary::kMemberSeparator) == 0);
  });
}

// A binary judged on each device; its judgement is the one on the device
// where it fares worst (the first such device on a tie).
// A host library built for another CPU than the device's machine never
// loads, whatever its images: the verdict says so first.
BinaryResult judge_on_every_device(const binary::FileScan& file,
                                   const std::vector<DeviceInfo>& devices,
                                   const compat::Driver& driver) {
  BinaryResult result;
  result.path = file.path;
  if (file.elf_machine != 0) result.elf_machine = binary::machine_name(file.elf_machine);
  if (devices.empty()) result.judgement.verdict = compat::Verdict::unknown;  // nothing to judge on
  for (size_t d = 0; d < devices.size(); ++d) {
    compat::BinaryJudgement judgement = compat::judge_binary(file, devices[d].cc, driver);
    if (!result.elf_machine.empty() && !devices[d].machine.empty() &&
        result.elf_machine != devices[d].machine) {
      judgement.verdict = compat::Verdict::wrong_platform;
      judgement.evidence = "built for " + result.elf_machine + "; " + devices[d].name +
                           " sits in an " + devices[d].machine + " machine";
      judgement.explanation = "The dynamic loader refuses a library built for " +
                              result.elf_machine + " on " + devices[d].machine +
                              " before any GPU code is looked at.";
    }
    result.per_device.push_back(judgement.verdict);
    result.chosen_per_device.push_back(judgement.chosen);
    if (d == 0 || compat::badness(judgement.verdict) > compat::badness(result.judgement.verdict)) {
      result.judgement = std::move(judgement);
      result.judged_on = d;
    }
  }
  const auto& chosen = result.judgement.chosen;
  if (chosen && *chosen < file.images.size() && file.images[*chosen].kind == binary::ImageKind::ptx)
    result.ptx_isa = file.images[*chosen].ptx_isa;
  return result;
}

// The PyTorch stack as installed: torch's own version (with its +cuXYZ
// label), the companions installed beside it and xformers.
InstalledTorchStack installed_torch_stack(const CheckReport& report,
                                          const std::vector<env::SitePackages>& sites) {
  InstalledTorchStack installed;
  if (report.torch) installed.torch = *report.torch;
  for (const auto& site : sites) {
    if (!site.find("torch")) continue;
    for (const char* name : {"torchvision", "torchaudio"}) {
      if (const auto* dist = site.find(name))
        installed.companions.emplace_back(name, dist->version);
    }
    if (const auto* xformers = site.find("xformers")) installed.xformers = xformers->version;
    break;
  }
  return installed;
}

// What blocks first, then worst first; the stacks' indices into the
// components follow them to their new places.
void sort_components(CheckReport& report) {
  std::vector<size_t> order(report.components.size());
  std::iota(order.begin(), order.end(), 0);
  const auto& components = report.components;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const auto& a = components[x];
    const auto& b = components[y];
    return std::tuple(!a.blocks(), -compat::badness(a.verdict), a.component.name) <
           std::tuple(!b.blocks(), -compat::badness(b.verdict), b.component.name);
  });
  std::vector<size_t> moved_to(order.size());
  std::vector<ComponentResult> sorted;
  sorted.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    moved_to[order[i]] = i;
    sorted.push_back(std::move(report.components[order[i]]));
  }
  report.components = std::move(sorted);
  for (auto& stack : report.stacks) {
    for (auto& [component, binary] : stack.binaries) component = moved_to[component];
  }
}

struct ComponentKey {
  env::ComponentKind kind;
  std::string name;
  std::string root;
  auto operator<=>(const ComponentKey&) const = default;
};

}  // namespace

CheckReport run_check(const CheckOptions& options) {
  require_named_roots(options);
  // What does not depend on anything else is read at once, while the scan
  // index is opened and the tree walked: the knowledge base's YAML and each
  // site-packages' dist-info, one after the other on one helper thread, so
  // that on two cores the main thread has the other to itself
  // (docs/scanning.md).
  struct Metadata {
    std::vector<env::SitePackages> sites;
    kb::KnowledgeBase kb;
  };
  auto metadata_read = std::async(std::launch::async, [&options] {
    std::vector<env::SitePackages> sites;
    for (const auto& dir : options.site_packages) sites.push_back(env::read_site_packages(dir));
    return Metadata{std::move(sites), options.kb ? kb::KnowledgeBase() : load_kb(options)};
  });

  CheckReport report;
  report.environment = options.environment;
  std::vector<std::string> wheel_findings;  // reported after the site-packages' own
  report.wheels = read_wheels(options, wheel_findings);
  std::vector<fs::path> roots = options.site_packages;
  if (options.custom_nodes) roots.push_back(*options.custom_nodes);
  roots.insert(roots.end(), options.wheels.begin(), options.wheels.end());
  roots.insert(roots.end(), options.paths.begin(), options.paths.end());
  if (roots.empty() && !options.probe_only_when_nothing_to_scan)
    throw CheckError(
        "nothing to check: give --site-packages DIR, --venv DIR, --custom-nodes DIR, --wheel FILE "
        "or paths");

  // Plugins load while the environment is scanned: torch_probe alone loads
  // libtorch (about 0.6 s here), which the scan of a big environment hides.
  std::future<plugin::PluginSet> plugins;
  if (options.plugins && !roots.empty())
    plugins = std::async(std::launch::async, plugin::load_plugins, *options.plugins);

  binary::TreeScan scan;
  std::optional<ScanIndex> index;
  if (!roots.empty()) {
    binary::TreeScanOptions scan_options;
    scan_options.threads = options.threads;
    scan_options.on_progress = options.on_progress;
    scan_options.archive_limits = options.archive_limits;
    if (options.scan_index_dir) {
      // Opened here, not beside the walk: the walk's first directory asks it.
      index = ScanIndex::open(*options.scan_index_dir, roots);
      scan_options.reuse_listing = [&](const std::string& dir, const binary::FileStamp& stamp) {
        return index->listing(dir, stamp);
      };
      scan_options.reuse = [&](const std::string& path, const binary::FileStamp& stamp) {
        return index->take(path, stamp);
      };
    }
    scan = binary::scan_tree(roots, scan_options);
    for (const auto& skipped : scan.skipped)
      report.findings.push_back(skipped.path + ": not followed: " + skipped.reason);
    report.scan.files = scan.files.size();
    report.scan.reused = scan.reused;
    report.scan.directories = scan.directories.size();
    report.scan.directories_reused = scan.listings_reused;
  }

  Metadata metadata = metadata_read.get();
  const kb::KnowledgeBase& kb = options.kb ? *options.kb : metadata.kb;
  choose_devices(options, kb, report);
  choose_driver(options, kb, report);
  if (roots.empty()) return report;  // probe only: verdict unknown
  // Who loads whom is worked out while the binaries are judged: neither
  // reads the other, and the helpers are done by now.
  auto graph_built =
      std::async(std::launch::async, [&] { return LinkGraph(scan.files, kb.packages()); });

  std::vector<env::SitePackages> sites = std::move(metadata.sites);
  std::string torch_cuda;  // "12.4": which per-CUDA library copies a process loads
  for (const auto& site : sites) {
    for (const auto& problem : site.problems) report.findings.push_back(problem.message);
    if (site.torch && !report.torch) {
      report.torch = site.torch->version;
      torch_cuda = site.torch->cuda;
    }
  }
  // The CUDA libraries a process of this environment could load: only an
  // environment has a process; a wheel or a file judged alone does not.
  if (!options.site_packages.empty()) {
    report.libraries =
        env::find_cuda_libraries(env::default_cuda_library_search(options.site_packages), sites);
    note_mixed_runtimes(report);
  }
  report.findings.insert(report.findings.end(), wheel_findings.begin(), wheel_findings.end());
  for (const auto& wheel : report.wheels) {
    if (wheel.torch && !report.torch) report.torch = wheel.torch->version;
    if (wheel.torch && torch_cuda.empty()) torch_cuda = wheel.torch->cuda;
  }
  if (index) {
    report.scan.index = index->problem();
    // An unchanged environment's index is already what this scan would write.
    if (!index->describes(scan)) {
      if (auto problem = index->save(scan); !problem.empty()) report.scan.index = problem;
    }
  }

  const compat::Driver driver{report.driver.version, report.driver.max_ptx_isa};
  const FileOwners owners = attribute_files(scan.files, sites, report.wheels, options.custom_nodes);
  std::map<ComponentKey, size_t> component_index;
  BinaryIndex binary_of_file(scan.files.size());
  std::vector<std::vector<const binary::FileScan*>> scans;  // per component, per binary
  for (size_t i = 0; i < scan.files.size(); ++i) {
    const auto& file = scan.files[i];
    if (!file.problems.empty()) {
      // A wheel's and its members' messages name them already; a --wheel
      // refused whole has said so once, when its metadata was read.
      const std::string& message = file.problems.front().message;
      std::string finding = message.starts_with(file.path) ? message : file.path + ": " + message;
      if (std::find(report.findings.begin(), report.findings.end(), finding) ==
          report.findings.end())
        report.findings.push_back(std::move(finding));
    }
    if (file.unreadable && !file.problems.empty() && in_a_wheel(file.path, options.wheels))
      report.unread.push_back(file.problems.front().message);
    if (!file.has_device_code()) continue;
    const env::Component& component = owners.owner[i];
    const ComponentKey key{component.kind, component.name, component.root.string()};
    const auto [at, inserted] = component_index.emplace(key, report.components.size());
    if (inserted) {
      report.components.emplace_back().component = component;
      scans.emplace_back();
    }
    auto& result = report.components[at->second];
    binary_of_file[i] = std::pair(at->second, result.binaries.size());
    result.binaries.push_back(judge_on_every_device(file, report.devices, driver));
    scans[at->second].push_back(&file);
  }

  // Copies a package never loads are set aside before anything is weighed.
  for (auto& result : report.components) {
    if (result.component.kind != env::ComponentKind::distribution) continue;
    if (const kb::Component* knowledge =
            kb.component_for(env::normalize_distribution_name(result.component.name)))
      mark_unloaded_variants(result, *knowledge, torch_cuda, report.findings);
  }
  std::vector<bool> set_aside(scan.files.size(), false);
  for (size_t i = 0; i < scan.files.size(); ++i) {
    if (const auto& where = binary_of_file[i])
      set_aside[i] =
          report.components[where->first].binaries[where->second].reach == Reach::unreached;
  }

  // Stacks, and every binary weighed by how it is reached.
  const auto plans = plan_stacks(scan.files, owners, sites, kb.packages(), set_aside);
  const LinkGraph graph = graph_built.get();
  report.stacks = judge_stacks(plans, {scan.files, owners, graph, binary_of_file, kb}, report);
  for (const auto& stack : report.stacks) {
    for (auto& component : report.components) {
      const auto& members = stack.members;
      if (component.stack.empty() &&
          std::find(members.begin(), members.end(), component.component.name) != members.end())
        component.stack = stack.name;
    }
  }

  if (options.confirm) {
    std::vector<ConfirmItem> items;
    for (size_t c = 0; c < report.components.size(); ++c) {
      auto& result = report.components[c];
      for (size_t b = 0; b < result.binaries.size(); ++b) {
        auto& binary = result.binaries[b];
        if (binary.reach != Reach::loaded ||
            binary.judgement.verdict == compat::Verdict::wrong_platform)
          continue;
        items.push_back({&binary, scans[c][b]});
      }
    }
    confirm_with_driver(items, options.libcuda, report);
  }

  AdviseContext context{report, kb, std::nullopt, installed_torch_stack(report, sites)};
  if (!report.driver.version.empty())
    context.driver = kb::parse_driver_version(report.driver.version);
  for (auto& stack : report.stacks) stack.fix = advise_stack(stack, context);
  for (auto& component : report.components)
    component.fix = advise_component(component, context, report.stacks);

  if (plugins.valid()) {
    report.probes = read_probes(plugins.get(), report.devices, report.findings);
    if (report.torch) note_other_torch(report.probes, *report.torch, options.site_packages);
  }
  sort_components(report);
  // Failing stacks first, and the PyTorch stack first among failing and
  // fitting ones alike: its fix moves the torch every other fix is matched to.
  std::stable_sort(report.stacks.begin(), report.stacks.end(),
                   [](const StackResult& a, const StackResult& b) {
                     const auto rank = [](const StackResult& s) {
                       return std::tuple(!compat::is_failure(s.verdict), s.anchor != "torch",
                                         -compat::badness(s.verdict));
                     };
                     return std::tuple(rank(a), a.name) < std::tuple(rank(b), b.name);
                   });

  if (report.devices.empty()) {
    report.verdict = OverallVerdict::unknown;
  } else {
    const bool fails =
        std::any_of(report.stacks.begin(), report.stacks.end(),
                    [](const StackResult& s) { return compat::is_failure(s.verdict); });
    // A failure seen is certain; a fit is only as sure as what was read.
    report.verdict = fails                   ? OverallVerdict::fails
                     : report.unread.empty() ? OverallVerdict::fits
                                             : OverallVerdict::unknown;
  }
  report.summary = summary_line(report);
  return report;
}

}  // namespace archfit::check
