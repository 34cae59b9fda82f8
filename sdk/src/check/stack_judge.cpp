#include "stack_judge.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <set>

#include "binary/zip_archive.hpp"
#include "compat/driver.hpp"
#include "library_needs.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::check {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kNothingLoadsIt = "nothing in what was checked links or opens it";

// The path packages.yaml's library patterns match: relative to the
// site-packages that holds it, inside its wheel, or relative to its pack.
fs::path relative_path(const std::string& path, const env::Component& owner,
                       const env::SitePackages* site) {
  if (const auto at = path.find(binary::kMemberSeparator); at != std::string::npos)
    return sys::path_of_utf8(path.substr(at + binary::kMemberSeparator.size()));
  if (site) return sys::path_of_utf8(path).lexically_relative(site->root);
  if (owner.kind == env::ComponentKind::custom_node)
    return sys::path_of_utf8(path).lexically_relative(owner.root.parent_path());
  return sys::path_of_utf8(path).filename();
}

std::string shown(const std::string& path, const FileOwners& owners, size_t file) {
  const auto relative = relative_path(path, owners.owner[file], owners.site[file]);
  return relative.empty() ? path : relative.generic_string();
}

// A component's verdict on each device is its worst loaded binary's there;
// its overall verdict, evidence, explanation and device are those of its
// worst loaded binary on that binary's worst device.
void aggregate(ComponentResult& result, const std::vector<DeviceInfo>& devices) {
  result.per_device.assign(devices.size(), compat::Verdict::no_device_code);
  std::vector<size_t> loaded;
  std::vector<compat::BinaryJudgement> judgements;
  result.reach = Reach::unreached;
  for (const auto& binary : result.binaries) {
    if (binary.reach == Reach::loaded) result.reach = Reach::loaded;
    if (binary.reach == Reach::feature && result.reach == Reach::unreached)
      result.reach = Reach::feature;
  }
  // Only loaded binaries make the verdict; a component nothing loads is
  // described by all of its own, and blocks nothing (ComponentResult::blocks).
  for (size_t i = 0; i < result.binaries.size(); ++i) {
    const auto& binary = result.binaries[i];
    if (result.reach == Reach::loaded && binary.reach != Reach::loaded) continue;
    loaded.push_back(i);
    judgements.push_back(binary.judgement);
    for (size_t d = 0; d < devices.size() && d < binary.per_device.size(); ++d) {
      if (compat::worse(binary.per_device[d], result.per_device[d]))
        result.per_device[d] = binary.per_device[d];
    }
  }
  const auto worst = compat::worst_binary(judgements);
  if (!worst) {
    result.verdict = compat::Verdict::no_device_code;
    return;
  }
  if (devices.empty()) {
    result.verdict = compat::Verdict::unknown;  // device code, but no GPU to judge it on
    return;
  }
  const BinaryResult& binary = result.binaries[loaded[*worst]];
  result.verdict = binary.judgement.verdict;
  result.evidence = binary.judgement.evidence;
  result.explanation = binary.judgement.explanation;
  result.device = devices[binary.judged_on].name;
}

// The CUDA runtime a stack is built for: torch's own word for the PyTorch
// stack, else the newest libcudart major its binaries load or link.
std::optional<CudaRuntime> cuda_runtime_of(const StackPlan& plan,
                                           const std::vector<ReachStep>& reached,
                                           const StackInputs& inputs) {
  if (plan.anchor == "torch" && plan.site && plan.site->torch && !plan.site->torch->cuda.empty()) {
    const auto& cuda = plan.site->torch->cuda;
    CudaRuntime runtime;
    if (std::from_chars(cuda.data(), cuda.data() + cuda.size(), runtime.major).ec != std::errc())
      return std::nullopt;
    runtime.version = cuda;
    runtime.source = "torch " + plan.site->torch->version + " (torch/version.py)";
    return runtime;
  }
  std::optional<CudaRuntime> best;
  const auto consider = [&](std::string_view name, const std::string& where) {
    const auto major = cudart_major(name);
    if (!major || (best && best->major >= *major)) return;
    best = CudaRuntime{*major, std::to_string(*major), std::string(name) + " (" + where + ")", {}};
  };
  for (const auto& step : reached) {
    const auto& file = inputs.files[step.file];
    if (!file.linkage) continue;
    const std::string where = shown(file.path, inputs.owners, step.file);
    consider(sys::path_of_utf8(file.path).filename().string(), where);
    for (const auto& needed : file.linkage->needed) consider(needed, "linked by " + where);
  }
  return best;
}

// The driver rules no image list shows, applied to a stack's per-device
// verdicts: a driver below the CUDA major's floor fails every device; a
// driver older than the first one that knows a GPU fails that GPU.
void apply_driver_rules(StackResult& stack, const CheckReport& report,
                        const std::optional<compat::DriverVersion>& driver,
                        std::vector<std::string>& reasons) {
  std::vector<std::string> per_device_reason(report.devices.size());
  if (driver && stack.cuda && stack.cuda->min_driver) {
    const auto check =
        compat::check_driver_for_cuda_major(*driver, stack.cuda->major, *stack.cuda->min_driver);
    if (!check.supported) {
      for (size_t d = 0; d < report.devices.size(); ++d) {
        per_device_reason[d] = "built with CUDA " + stack.cuda->version + " (" +
                               stack.cuda->source + "); " + check.explanation;
      }
    }
  }
  for (size_t d = 0; d < report.devices.size(); ++d) {
    const auto& device = report.devices[d];
    if (!device.driver_knows_it && driver && device.first_driver) {
      per_device_reason[d] = device.label() + " needs NVIDIA driver " +
                             device.first_driver->to_string() +
                             " or newer, the first that knows its architecture; driver " +
                             driver->to_string() + " does not list it";
    }
  }
  for (size_t d = 0; d < report.devices.size(); ++d) {
    if (per_device_reason[d].empty()) continue;
    if (compat::worse(compat::Verdict::driver_too_old, stack.per_device[d]))
      stack.per_device[d] = compat::Verdict::driver_too_old;
    reasons[d] = per_device_reason[d];
  }
}

}  // namespace

std::optional<uint32_t> cudart_major(std::string_view name) {
  constexpr std::string_view kElfPrefix = "libcudart.so.";
  if (name.starts_with(kElfPrefix)) {
    name.remove_prefix(kElfPrefix.size());
    uint32_t major = 0;
    const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), major);
    if (error != std::errc() || major == 0) return std::nullopt;
    return major;
  }
  // cudart64_110.dll (11.x), cudart64_12.dll, cudart64_13.dll: an import
  // may spell it in capitals (CUDART64_12.DLL).
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  constexpr std::string_view kDllPrefix = "cudart64_", kDllSuffix = ".dll";
  if (!lower.starts_with(kDllPrefix) || !lower.ends_with(kDllSuffix)) return std::nullopt;
  const std::string digits =
      lower.substr(kDllPrefix.size(), lower.size() - kDllPrefix.size() - kDllSuffix.size());
  if (digits.empty() || digits.size() > 3 ||
      !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::nullopt;
  const uint32_t major =
      static_cast<uint32_t>(std::stoul(digits.size() == 3 ? digits.substr(0, 2) : digits));
  if (major == 0) return std::nullopt;
  return major;
}

namespace {

// How a binary is first reached: loaded on the normal path, or only for a
// feature, and the words that say by what.
struct Reached {
  bool loaded = false, feature = false;
  std::string reason;
};
using ReachMap = std::map<std::pair<size_t, size_t>, Reached>;

// What each stack reaches (reached[u]), walking from its own files; each
// stack's own files (roots) are reached by another but not followed from it
// (xformers links torch's libraries; what those load is torch's). Returns
// how every binary is first reached.
ReachMap reach_from_every_stack(const std::vector<StackPlan>& plans, const StackInputs& inputs,
                                const std::vector<size_t>& root_of,
                                std::vector<std::vector<ReachStep>>& reached) {
  const auto& packages = inputs.kb.packages();
  ReachMap binary_reach;
  for (size_t u = 0; u < plans.size(); ++u) {
    std::vector<bool> others(inputs.files.size(), false);
    for (size_t f = 0; f < inputs.files.size(); ++f)
      others[f] = root_of[f] != plans.size() && root_of[f] != u;
    reached[u] = inputs.graph.reach_from(plans[u].roots, &others);
    for (const auto& step : reached[u]) {
      const auto& where = inputs.binary_of_file[step.file];
      if (!where) continue;
      auto& reach = binary_reach[*where];
      const auto& file = inputs.files[step.file];
      const auto* feature = packages.feature_of(
          relative_path(file.path, inputs.owners.owner[step.file], inputs.owners.site[step.file]));
      if (feature) {
        if (!reach.feature && !reach.loaded) reach.reason = feature->feature;
        reach.feature = true;
        continue;
      }
      if (reach.loaded) continue;
      reach.loaded = true;
      if (!step.from) {
        reach.reason = "part of " + plans[u].name;
      } else {
        reach.reason = std::string(step.opened ? "opened by " : "linked from ") +
                       shown(inputs.files[*step.from].path, inputs.owners, *step.from);
      }
    }
  }
  return binary_reach;
}

// Every binary's reach written into the report, and each component's
// verdict over what it loads.
void mark_reach(const ReachMap& binary_reach, CheckReport& report) {
  for (size_t c = 0; c < report.components.size(); ++c) {
    auto& component = report.components[c];
    for (size_t b = 0; b < component.binaries.size(); ++b) {
      auto& binary = component.binaries[b];
      // A copy the package never loads (a bitsandbytes library for another
      // CUDA) was set aside before and keeps its reason.
      if (binary.reach == Reach::unreached && !binary.reach_reason.empty()) continue;
      const auto found = binary_reach.find({c, b});
      if (found == binary_reach.end()) {
        binary.reach = Reach::unreached;
        binary.reach_reason = kNothingLoadsIt;
      } else if (found->second.loaded) {
        binary.reach = Reach::loaded;
        binary.reach_reason = found->second.reason;
      } else {
        binary.reach = Reach::feature;
        binary.reach_reason = found->second.reason;
      }
    }
    aggregate(component, report.devices);
  }
}

// Files left by another release beside a library that opens its own
// (reach.hpp, LeftOverFile), said once each where that library is loaded:
// never loaded, so never judged and never a reason for a fix.
void note_left_over_files(const StackInputs& inputs,
                          const std::vector<std::vector<ReachStep>>& reached, CheckReport& report) {
  std::vector<bool> loaded(inputs.files.size(), false);
  for (const auto& steps : reached) {
    for (const auto& step : steps) loaded[step.file] = true;
  }
  std::vector<bool> said(inputs.files.size(), false);
  for (const auto& left : inputs.graph.left_over()) {
    if (!loaded[left.opener] || loaded[left.file] || said[left.file]) continue;
    said[left.file] = true;
    const auto& owner = inputs.owners.owner[left.file];
    const std::string from = owner.kind == env::ComponentKind::distribution
                                 ? owner.name + " " + owner.version
                                 : "an earlier install";
    const auto& installer = *left.opener_installed_by;
    const std::string opener = shown(inputs.files[left.opener].path, inputs.owners, left.opener);
    const std::string reason = "left over from " + from + ": the " + opener + " of " +
                               installer.name + " " + installer.version + " does not open it";
    report.findings.push_back(shown(inputs.files[left.file].path, inputs.owners, left.file) +
                              " is " + reason + "; it is never loaded and not judged");
    if (const auto& where = inputs.binary_of_file[left.file]) {
      auto& binary = report.components[where->first].binaries[where->second];
      binary.reach_reason = reason;
    }
  }
}

// The binaries stack `u` loads, weighed into its per-device verdicts: its
// own and the supplier wheels' it reaches; another stack's own binaries
// (torch's, reached from xformers) are judged in that stack, a feature's
// become notes. root_of[f] is the stack whose own file f is, or
// `no_stack`. Returns those weighed.
std::vector<const BinaryResult*> weigh_reached(size_t u, const std::vector<ReachStep>& reached,
                                               const std::vector<size_t>& root_of, size_t no_stack,
                                               const StackInputs& inputs, const CheckReport& report,
                                               StackResult& stack) {
  const auto& packages = inputs.kb.packages();
  std::vector<const BinaryResult*> judged;
  for (const auto& step : reached) {
    const auto& where = inputs.binary_of_file[step.file];
    if (!where) continue;
    if (root_of[step.file] != no_stack && root_of[step.file] != u) continue;
    const auto& component = report.components[where->first];
    const auto& binary = component.binaries[where->second];
    if (binary.reach == Reach::unreached) continue;  // a copy set aside
    const auto& file = inputs.files[step.file];
    if (const auto* feature = packages.feature_of(relative_path(
            file.path, inputs.owners.owner[step.file], inputs.owners.site[step.file]))) {
      for (size_t d = 0; d < report.devices.size() && d < binary.per_device.size(); ++d) {
        if (!compat::is_failure(binary.per_device[d]) || !feature->exists_on(report.devices[d].cc))
          continue;
        stack.notes.push_back({feature->feature, component.component.name, binary.path,
                               binary.per_device[d], report.devices[d].name,
                               binary.judgement.evidence});
        break;
      }
      continue;
    }
    stack.binaries.push_back(*where);
    judged.push_back(&binary);
    for (size_t d = 0; d < report.devices.size() && d < binary.per_device.size(); ++d)
      stack.per_device[d] = compat::worse_of(stack.per_device[d], binary.per_device[d]);
  }
  return judged;
}

// The evidence of a stack that does not load: the first library missing.
void say_what_is_missing(StackResult& stack) {
  const MissingLibrary& missing = stack.missing_libraries.front();
  stack.evidence = missing.needed_by + " links " + missing.library +
                   ", which is neither installed nor where the loader looks (" +
                   missing.distribution + " installs it)";
  stack.explanation = "It does not load at all: importing it stops at \"" + missing.library +
                      ": cannot open shared object file\" (on Windows, \"DLL load failed\") "
                      "before any GPU code is tried, whatever images it holds.";
}

// The stack's verdict, device and evidence: the worst device's, and on it
// the worst binary's (or the driver's reason, or the missing library, when
// that is what fails).
void name_the_worst(const std::vector<const BinaryResult*>& judged,
                    const std::vector<std::string>& driver_reasons, bool has_device_code,
                    const CheckReport& report, StackResult& stack) {
  if (report.devices.empty()) {
    // A library missing fails on any GPU; device code but no GPU to judge
    // it on is unknown (as aggregate() says of a component).
    if (!stack.missing_libraries.empty()) {
      stack.verdict = compat::Verdict::missing_library;
      say_what_is_missing(stack);
    } else if (has_device_code) {
      stack.verdict = compat::Verdict::unknown;
    }
    return;
  }
  size_t worst_device = 0;
  for (size_t d = 1; d < report.devices.size(); ++d) {
    if (compat::worse(stack.per_device[d], stack.per_device[worst_device])) worst_device = d;
  }
  stack.verdict = stack.per_device[worst_device];
  stack.device = report.devices[worst_device].name;
  if (stack.verdict == compat::Verdict::missing_library) {
    say_what_is_missing(stack);
    return;
  }
  if (stack.verdict == compat::Verdict::driver_too_old && !driver_reasons[worst_device].empty()) {
    stack.evidence = driver_reasons[worst_device];
    stack.explanation =
        "The images would run, but the driver will not load them: " + driver_reasons[worst_device] +
        ".";
    return;
  }
  const BinaryResult* worst = nullptr;
  for (const auto* binary : judged) {
    if (worst_device >= binary->per_device.size()) continue;
    if (!worst || compat::worse(binary->per_device[worst_device], worst->per_device[worst_device]))
      worst = binary;
  }
  if (worst) {
    stack.evidence = sys::utf8_of(worst->path.filename()) + ": " + worst->judgement.evidence;
    stack.explanation = worst->judgement.explanation;
  }
}

}  // namespace

std::vector<StackResult> judge_stacks(const std::vector<StackPlan>& plans,
                                      const StackInputs& inputs, CheckReport& report) {
  std::optional<compat::DriverVersion> driver;
  if (!report.driver.version.empty()) driver = kb::parse_driver_version(report.driver.version);

  // Pass 1: what each stack reaches, and how every binary is first reached.
  std::vector<size_t> root_of(inputs.files.size(), plans.size());
  for (size_t u = 0; u < plans.size(); ++u) {
    for (const size_t root : plans[u].roots) root_of[root] = u;
  }
  std::vector<std::vector<ReachStep>> reached(plans.size());
  mark_reach(reach_from_every_stack(plans, inputs, root_of, reached), report);
  note_left_over_files(inputs, reached, report);

  // Pass 2: each stack's verdict over the binaries it loads.
  std::vector<StackResult> stacks;
  for (size_t u = 0; u < plans.size(); ++u) {
    const auto& plan = plans[u];
    StackResult stack;
    stack.name = plan.name;
    stack.anchor = plan.anchor;
    // torch/version.py has the build's own name ("2.8.0+cu128"); METADATA not.
    stack.version = plan.anchor == "torch" && plan.site && plan.site->torch
                        ? plan.site->torch->version
                        : plan.version;
    stack.kind = plan.kind;
    stack.members = plan.members;
    stack.per_device.assign(report.devices.size(), compat::Verdict::no_device_code);
    const auto judged = weigh_reached(u, reached[u], root_of, plans.size(), inputs, report, stack);
    // Every binary weighed here holds device code (binary_of_file names no
    // other); a stack that loads none has nothing for a GPU to run.
    const bool has_device_code = !judged.empty();
    if (!has_device_code && stack.notes.empty()) continue;
    stack.cuda = cuda_runtime_of(plan, reached[u], inputs);
    if (stack.cuda)
      stack.cuda->min_driver =
          inputs.kb.cuda_floor_for_major(stack.cuda->major, report.driver.family);
    std::vector<std::string> driver_reasons(report.devices.size());
    if (has_device_code) apply_driver_rules(stack, report, driver, driver_reasons);
    // What stops it loading at all, in its own files and its suppliers'
    // (another stack's libraries are that stack's to judge).
    std::vector<size_t> own_files;
    for (const auto& step : reached[u]) {
      if (root_of[step.file] == plans.size() || root_of[step.file] == u)
        own_files.push_back(step.file);
    }
    auto needs = library_needs(
        own_files, inputs.graph, inputs.kb.packages(), inputs.loader,
        [&](size_t file) { return shown(inputs.files[file].path, inputs.owners, file); });
    report.findings.insert(report.findings.end(), needs.findings.begin(), needs.findings.end());
    stack.missing_libraries = std::move(needs.missing);
    if (!stack.missing_libraries.empty()) {
      for (auto& verdict : stack.per_device)
        verdict = compat::worse_of(verdict, compat::Verdict::missing_library);
    }
    name_the_worst(judged, driver_reasons, has_device_code, report, stack);
    stacks.push_back(std::move(stack));
  }
  return stacks;
}

}  // namespace archfit::check
