#include "check.hpp"

#include <algorithm>
#include <future>
#include <map>
#include <numeric>
#include <tuple>

#include "advise.hpp"
#include "binary/archive_scan.hpp"
#include "binary/elf_linkage.hpp"
#include "binary/tree_scan.hpp"
#include "confirm.hpp"
#include "devices.hpp"
#include "env/python_env.hpp"
#include "env/python_locate.hpp"
#include "environment_commands.hpp"
#include "framework_builds.hpp"
#include "kb/kb_error.hpp"
#include "loaded_variant.hpp"
#include "reach.hpp"
#include "scan_index.hpp"
#include "stack_judge.hpp"
#include "stack_plan.hpp"
#include "summary.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::check {

namespace fs = std::filesystem;

const kb::KnowledgeBase& knowledge_base_of(const CheckResources& resources) {
  if (!resources.knowledge_base.valid())
    throw CheckError("no knowledge base was given to the check");
  try {
    return *resources.knowledge_base.get();
  } catch (const kb::KbError& error) {
    throw CheckError(std::string("the knowledge base could not be read: ") + error.what());
  }
}

namespace {

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
void require_named_roots(const CheckRequest& request) {
  const auto require = [](const fs::path& path, const char* what) {
    std::error_code error;
    if (fs::symlink_status(path, error).type() == fs::file_type::not_found)
      throw CheckError(std::string(what) + " " + path.string() + ": no such file or folder");
  };
  for (const auto& dir : request.site_packages) require(dir, "site-packages");
  if (request.custom_nodes) require(*request.custom_nodes, "custom_nodes");
  for (const auto& path : request.paths) require(path, "path");
}

// Each --wheel: its name, version and tags, read from inside it. The scan
// opens it again for its libraries (scan_tree reads named wheels).
std::vector<env::Wheel> read_wheels(const CheckRequest& request,
                                    std::vector<std::string>& findings) {
  std::vector<env::Wheel> wheels;
  for (const auto& path : request.wheels) {
    if (!fs::is_regular_file(path)) throw CheckError("no wheel file at " + path.string());
    if (!binary::is_wheel(path)) throw CheckError(path.string() + " is not a wheel (a .whl file)");
    env::Wheel wheel = env::read_wheel(path);
    for (const auto& problem : wheel.problems) findings.push_back(problem.message);
    if (!wheel.targets_a_read_platform()) {
      findings.push_back(path.filename().string() + " is built for " + wheel.tags.front() +
                         ", neither Linux nor Windows; archfit reads ELF and PE libraries, so "
                         "its binaries were not judged.");
    }
    wheels.push_back(std::move(wheel));
  }
  return wheels;
}

// A binary judged on each device; its judgement is the one on the device
// where it fares worst (the first such device on a tie).
BinaryResult judge_on_every_device(const binary::FileScan& file,
                                   const std::vector<DeviceInfo>& devices,
                                   const compat::Driver& driver) {
  BinaryResult result;
  result.path = sys::path_of_utf8(file.path);
  if (file.machine != 0) result.machine = binary::machine_name(file.machine);
  if (devices.empty()) result.judgement.verdict = compat::Verdict::unknown;  // nothing to judge on
  for (size_t d = 0; d < devices.size(); ++d) {
    const compat::Placement placement{result.machine, devices[d].machine, devices[d].name};
    compat::BinaryJudgement judgement =
        compat::judge_binary(file, devices[d].cc, driver, placement);
    result.per_device.push_back(judgement.verdict);
    result.chosen_per_device.push_back(judgement.chosen);
    if (d == 0 || compat::worse(judgement.verdict, result.judgement.verdict)) {
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
  installed.driver_family = report.driver.family;
  installed.windows = std::any_of(report.wheels.begin(), report.wheels.end(),
                                  [](const env::Wheel& wheel) { return wheel.targets_windows(); });
  for (const auto& site : sites) {
    if (!site.find("torch")) continue;
    installed.windows |= env::windows_site_packages(site.root);
    installed.without_cuda = site.torch && site.torch->cuda.empty();
    for (const char* name : {"torchvision", "torchaudio"}) {
      if (const auto* dist = site.find(name))
        installed.companions.emplace_back(name, dist->version);
    }
    if (const auto* xformers = site.find("xformers")) installed.xformers = xformers->version;
    break;
  }
  if (installed.windows) {
    // On Windows torch, torchvision and torchaudio move together, from
    // PyTorch's index: a torchvision left from PyPI is a CPU-only build.
    for (const char* name : {"torchvision", "torchaudio"}) {
      const bool listed =
          std::any_of(installed.companions.begin(), installed.companions.end(),
                      [&](const auto& companion) { return companion.first == name; });
      if (!listed) installed.companions.emplace_back(name, "");
    }
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

// One check, stage by stage (docs/design.md, "The flow of data"):
// locate → scan → probe → attribute and judge → stacks → advise → report.
// Each stage reads what the ones before it left in the run.
class CheckRun {
 public:
  CheckRun(const CheckRequest& request, const CheckResources& resources)
      : request_(request), resources_(resources) {}

  // What the check is told to judge: every named root exists, each --wheel
  // is read for its name and tags, and the site-packages' metadata is read on
  // a helper thread while the tree is walked.
  void locate();
  // The tree (through the scan index when there is one), with the plugins
  // loading beside it: torch_probe alone loads libtorch (about 0.6 s here).
  void scan();
  // The devices and driver; waits for the knowledge base.
  void probe();
  bool nothing_to_scan() const { return roots_.empty(); }
  // The environment's metadata, its CUDA libraries, and each file's owner.
  void attribute();
  // Every binary with device code, on every device, under its component.
  void judge();
  // Copies a package never loads set aside; stacks planned and judged over
  // how each binary is reached.
  void judge_stacks();
  // --confirm: the real driver asked to load what was judged.
  void confirm();
  void advise();
  // Probes' facts, the order of components and stacks, the verdict and the
  // one-line summary.
  CheckReport finish();

  CheckReport report;

 private:
  const kb::KnowledgeBase& kb() const { return *kb_; }

  const CheckRequest& request_;
  const CheckResources& resources_;
  const kb::KnowledgeBase* kb_ = nullptr;
  std::vector<fs::path> roots_;
  std::vector<std::string> wheel_findings_;  // reported after the site-packages' own
  std::future<std::vector<env::SitePackages>> sites_read_;
  std::future<plugin::PluginSet> plugins_;
  binary::TreeScan scan_;
  std::optional<ScanIndex> index_;
  std::future<LinkGraph> graph_built_;
  std::vector<env::SitePackages> sites_;
  std::string torch_cuda_;  // "12.4": which per-CUDA library copies a process loads
  std::optional<FileOwners> owners_;
  BinaryIndex binary_of_file_;
  std::vector<std::vector<const binary::FileScan*>> scans_;  // per component, per binary
};

void CheckRun::locate() {
  require_named_roots(request_);
  // Read at once, while the scan index is opened and the tree walked, on one
  // helper thread, so that on two cores the main thread has the other to
  // itself (docs/scanning.md); the knowledge base is read beside it.
  sites_read_ = std::async(std::launch::async, [this] {
    std::vector<env::SitePackages> sites;
    for (const auto& dir : request_.site_packages) sites.push_back(env::read_site_packages(dir));
    return sites;
  });
  report.environment = request_.environment;
  report.wheels = read_wheels(request_, wheel_findings_);
  roots_ = request_.site_packages;
  if (request_.custom_nodes) roots_.push_back(*request_.custom_nodes);
  roots_.insert(roots_.end(), request_.wheels.begin(), request_.wheels.end());
  roots_.insert(roots_.end(), request_.paths.begin(), request_.paths.end());
  if (roots_.empty() && !request_.probe_only_when_nothing_to_scan)
    throw CheckError(
        "nothing to check: give --site-packages DIR, --venv DIR, --custom-nodes DIR, --wheel FILE "
        "or paths");
}

void CheckRun::scan() {
  if (roots_.empty()) return;
  // The plugins load in archfit-plugin-probe, started with posix_spawn
  // (plugin/probe_helper.hpp): nothing is forked beside the scanning
  // threads, so they load while the scan runs.
  if (request_.plugins)
    plugins_ = std::async(std::launch::async, plugin::load_plugins, *request_.plugins,
                          resources_.plugin_environment);
  binary::TreeScanOptions scan_options;
  scan_options.threads = resources_.threads;
  scan_options.on_progress = resources_.on_progress;
  scan_options.archive_limits = resources_.archive_limits;
  if (resources_.scan_index_dir) {
    // Opened here, not beside the walk: the walk's first directory asks it.
    index_ = ScanIndex::open(*resources_.scan_index_dir, roots_);
    scan_options.reuse_listing = [this](const std::string& dir, const binary::FileStamp& stamp) {
      return index_->listing(dir, stamp);
    };
    scan_options.reuse = [this](const std::string& path, const binary::FileStamp& stamp,
                                const std::string& real_path) {
      return index_->take(path, stamp, real_path);
    };
  }
  scan_ = binary::scan_tree(roots_, scan_options);
  for (const auto& skipped : scan_.skipped)
    report.findings.push_back(skipped.path + ": not followed: " + skipped.reason);
  report.scan.files = scan_.files.size();
  report.scan.reused = scan_.reused;
  report.scan.directories = scan_.directories.size();
  report.scan.directories_reused = scan_.listings_reused;
}

void CheckRun::probe() {
  sites_ = sites_read_.get();
  kb_ = &knowledge_base_of(resources_);
  // Known before the driver: a Windows environment's driver is a Windows one.
  report.command_target = command_target(report, request_.site_packages);
  choose_devices(request_, resources_, kb(), report);
  choose_driver(request_, kb(), report);
}

void CheckRun::attribute() {
  // Who loads whom is worked out while the binaries are judged: neither
  // reads the other, and the helpers are done by now.
  graph_built_ = std::async(std::launch::async,
                            [this] { return LinkGraph(scan_.files, kb().packages(), sites_); });
  for (const auto& site : sites_) {
    for (const auto& problem : site.problems) report.findings.push_back(problem.message);
    if (site.torch && !report.torch) {
      report.torch = site.torch->version;
      torch_cuda_ = site.torch->cuda;
    }
  }
  // The CUDA libraries a process of this environment could load: only an
  // environment has a process; a wheel or a file judged alone does not.
  if (!request_.site_packages.empty()) {
    report.libraries =
        env::find_cuda_libraries(env::default_cuda_library_search(request_.site_packages), sites_);
    note_mixed_runtimes(report);
  }
  report.findings.insert(report.findings.end(), wheel_findings_.begin(), wheel_findings_.end());
  for (const auto& wheel : report.wheels) {
    if (wheel.torch && !report.torch) report.torch = wheel.torch->version;
    if (wheel.torch && torch_cuda_.empty()) torch_cuda_ = wheel.torch->cuda;
  }
  if (index_) {
    report.scan.index = index_->problem();
    // An unchanged environment's index is already what this scan would write.
    if (!index_->describes(scan_)) {
      if (auto problem = index_->save(scan_); !problem.empty()) report.scan.index = problem;
    }
  }
  owners_ = attribute_files(scan_.files, sites_, report.wheels, request_.custom_nodes);
}

void CheckRun::judge() {
  // A folder named to judge that is empty was likely not the one meant:
  // nothing was judged, so it is not "fits" (issue 34).
  for (const auto& path : request_.paths) {
    std::error_code error;
    if (fs::is_directory(path, error) && fs::is_empty(path, error) && !error)
      report.unread.push_back(path.string() + ": an empty folder, with nothing in it to judge");
  }
  const compat::Driver driver{report.driver.version, report.driver.max_ptx_isa};
  std::map<ComponentKey, size_t> component_index;
  binary_of_file_.assign(scan_.files.size(), std::nullopt);
  for (size_t i = 0; i < scan_.files.size(); ++i) {
    const auto& file = scan_.files[i];
    if (!file.problems.empty()) {
      // A wheel's and its members' messages name them already; a --wheel
      // refused whole has said so once, when its metadata was read.
      const std::string& message = file.problems.front().message;
      std::string finding = message.starts_with(file.path) ? message : file.path + ": " + message;
      if (std::find(report.findings.begin(), report.findings.end(), finding) ==
          report.findings.end())
        report.findings.push_back(std::move(finding));
    }
    // What could not be read is never "fits": a file or folder that could
    // not be opened or listed (a pseudo-filesystem named), a member of a
    // --wheel not read, and a library, extension module or device-code file
    // whose headers were too damaged to show a single image (issues 33, 34).
    const bool damaged_binary = !file.problems.empty() && !file.has_device_code() &&
                                file.format != binary::FileFormat::other;
    if ((file.unreadable && !file.problems.empty()) || damaged_binary) {
      const std::string& message = file.problems.front().message;
      report.unread.push_back(message.starts_with(file.path) ? message
                                                             : file.path + ": " + message);
    }
    if (!file.has_device_code()) continue;
    const env::Component& component = owners_->owner[i];
    const ComponentKey key{component.kind, component.name, component.root.string()};
    const auto [at, inserted] = component_index.emplace(key, report.components.size());
    if (inserted) {
      report.components.emplace_back().component = component;
      scans_.emplace_back();
    }
    auto& result = report.components[at->second];
    binary_of_file_[i] = std::pair(at->second, result.binaries.size());
    result.binaries.push_back(judge_on_every_device(file, report.devices, driver));
    scans_[at->second].push_back(&file);
  }
}

void CheckRun::judge_stacks() {
  // Copies a package never loads are set aside before anything is weighed.
  for (auto& result : report.components) {
    if (result.component.kind != env::ComponentKind::distribution) continue;
    if (const kb::Component* knowledge =
            kb().component_for(env::normalize_distribution_name(result.component.name)))
      mark_unloaded_variants(result, *knowledge, torch_cuda_, report.findings);
  }
  std::vector<bool> set_aside(scan_.files.size(), false);
  for (size_t i = 0; i < scan_.files.size(); ++i) {
    if (const auto& where = binary_of_file_[i])
      set_aside[i] =
          report.components[where->first].binaries[where->second].reach == Reach::unreached;
  }
  const auto plans = plan_stacks(scan_.files, *owners_, sites_, kb().packages(), set_aside);
  const LinkGraph graph = graph_built_.get();
  const sys::LoaderSearch loader =
      resources_.loader_search ? *resources_.loader_search : sys::loader_search();
  report.stacks = check::judge_stacks(
      plans, {scan_.files, *owners_, graph, binary_of_file_, kb(), loader}, report);
  for (const auto& stack : report.stacks) {
    for (auto& component : report.components) {
      const auto& members = stack.members;
      if (component.stack.empty() &&
          std::find(members.begin(), members.end(), component.component.name) != members.end())
        component.stack = stack.name;
    }
  }
  // What no image list shows: a torch built without CUDA.
  judge_framework_builds(sites_, report.wheels, kb(), report);
}

void CheckRun::confirm() {
  if (!request_.confirm) return;
  std::vector<ConfirmItem> items;
  for (size_t c = 0; c < report.components.size(); ++c) {
    auto& result = report.components[c];
    for (size_t b = 0; b < result.binaries.size(); ++b) {
      auto& binary = result.binaries[b];
      if (binary.reach != Reach::loaded ||
          binary.judgement.verdict == compat::Verdict::wrong_platform)
        continue;
      items.push_back({&binary, scans_[c][b]});
    }
  }
  confirm_with_driver(items, resources_.libcuda, report);
}

void CheckRun::advise() {
  AdviseContext context{report, kb(), std::nullopt, installed_torch_stack(report, sites_)};
  if (!report.driver.version.empty())
    context.driver = kb::parse_driver_version(report.driver.version);
  for (auto& stack : report.stacks) stack.fix = advise_stack(stack, context);
  for (auto& component : report.components)
    component.fix = advise_component(component, context, report.stacks);
  // Last: every command in the environment's own interpreter and shell.
  speak_in_environment(report, report.command_target);
}

CheckReport CheckRun::finish() {
  if (plugins_.valid()) {
    report.probes = read_probes(plugins_.get(), report.devices, report.findings);
    if (report.torch) note_other_torch(report.probes, *report.torch, request_.site_packages);
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
  return std::move(report);
}

}  // namespace

CheckReport run_check(const CheckRequest& request, const CheckResources& resources) {
  CheckRun run(request, resources);
  run.locate();
  run.scan();
  run.probe();
  if (run.nothing_to_scan()) return std::move(run.report);  // probe only: verdict unknown
  run.attribute();
  run.judge();
  run.judge_stacks();
  run.confirm();
  run.advise();
  return run.finish();
}

}  // namespace archfit::check
