#include "weigh.hpp"

#include <algorithm>

#include "compat/arch.hpp"
#include "compat/verdict.hpp"

namespace archfit::diagnose {

namespace {

// The newest of some targets, as the rule table orders capabilities.
std::string newest(const std::vector<compat::Target>& targets) {
  const auto best = std::max_element(
      targets.begin(), targets.end(),
      [](const compat::Target& a, const compat::Target& b) { return a.arch.cc < b.arch.cc; });
  return best == targets.end() ? std::string() : best->to_string();
}

// "SASS up to sm_90 and no PTX", "no SASS, only PTX for compute_90".
std::string images_phrase(const check::ReportedBinary& binary) {
  const std::string sass = binary.sass.size() == 1 ? "SASS for " + binary.sass.front().to_string()
                           : binary.sass.empty()   ? ""
                                                   : "SASS up to " + newest(binary.sass);
  const std::string ptx = binary.ptx.size() == 1 ? "PTX for " + binary.ptx.front().to_string()
                          : binary.ptx.empty()   ? ""
                                                 : "PTX up to " + newest(binary.ptx);
  if (sass.empty() && ptx.empty()) return "no SASS or PTX";
  if (sass.empty()) return "no SASS, only " + ptx;
  return sass + (ptx.empty() ? " and no PTX" : " and " + ptx);
}

// The binary a component's verdict comes from: its first loaded one with
// that verdict (a feature's library or a copy never loaded does not count).
const check::ReportedBinary* worst_binary(const check::ReportedComponent& component) {
  for (const auto& binary : component.binaries) {
    if (binary.loaded && binary.verdict == component.verdict) return &binary;
  }
  for (const auto& binary : component.binaries) {
    if (binary.loaded) return &binary;
  }
  return component.binaries.empty() ? nullptr : &component.binaries.front();
}

// What a verdict means for the device, in the words of a sentence about a
// component; a verdict this archfit does not know is named as the report has it.
std::string verdict_words(const check::ReportedVerdict& reported) {
  if (!reported.verdict) return "the check's verdict is " + reported.name;
  switch (*reported.verdict) {
    case compat::Verdict::native:
      return "it has SASS that runs there";
    case compat::Verdict::ptx_jit:
      return "the driver JIT-compiles its PTX there";
    case compat::Verdict::no_image:
      return "no image in it runs there";
    case compat::Verdict::ptx_too_new_for_driver:
      return "its PTX is newer than the driver compiles";
    case compat::Verdict::relocatable_only:
      return "its device code is relocatable only and never loads";
    case compat::Verdict::no_device_code:
      return "it has no device code";
    case compat::Verdict::driver_too_old:
      return "the driver is too old for it";
    case compat::Verdict::wrong_platform:
      return "it is built for another CPU";
    case compat::Verdict::no_cuda_build:
      return "it is built without CUDA and never uses the GPU";
    case compat::Verdict::missing_library:
      return "a library it links is missing, so it does not load";
    case compat::Verdict::unknown:
      break;  // no GPU to judge against: named as it is
  }
  return "the check's verdict is " + reported.name;
}

std::string device_words(const check::ReportedDevice* device) {
  if (!device) return "no GPU was judged";
  return "your GPU is " + device->sm() + (device->name.empty() ? "" : " (" + device->name + ")");
}

// "xformers 0.0.28.post1 has SASS up to sm_90 and no PTX (in 3 of its 4
// binaries); your GPU is sm_120 (GeForce RTX 5090): no image in it runs there".
std::string component_sentence(const check::ReportedComponent& component,
                               const check::ReportedEnvironment& environment) {
  std::string out = component.name + (component.version.empty() ? "" : " " + component.version);
  if (const check::ReportedBinary* binary = worst_binary(component)) {
    out += " has " + images_phrase(*binary);
    const auto loaded = std::count_if(component.binaries.begin(), component.binaries.end(),
                                      [](const check::ReportedBinary& b) { return b.loaded; });
    const auto alike = std::count_if(component.binaries.begin(), component.binaries.end(),
                                     [&](const check::ReportedBinary& other) {
                                       return other.loaded && other.verdict == component.verdict;
                                     });
    if (loaded > 1 && alike < loaded)
      out += " (in " + std::to_string(alike) + " of its " + std::to_string(loaded) +
             " loaded binaries)";
  } else {
    out += " has no CUDA binary the check judged";
  }
  return out + "; " + device_words(environment.device_named(component.device)) + ": " +
         verdict_words(component.verdict);
}

std::string device_line(const check::ReportedDevice& device) {
  return (device.name.empty() ? device.sm() : device.name + " (" + device.sm()) +
         (device.simulated      ? ", simulated)"
          : device.name.empty() ? ""
                                : ")");
}

std::vector<const check::ReportedComponent*> failing(
    const check::ReportedEnvironment& environment) {
  std::vector<const check::ReportedComponent*> out;
  for (const auto& component : environment.components) {
    if (component.fails()) out.push_back(&component);
  }
  return out;
}

// The check's fix for what it finds failing ("<name>: <summary>", then its
// commands), exact for the installed version and every GPU judged.
void add_fix(const std::string& name, const std::string& summary,
             const std::vector<std::string>& commands, EnvironmentFinding& finding) {
  finding.fix.push_back({.about = name, .text = summary, .command = ""});
  for (const auto& command : commands)
    finding.fix.push_back({.about = name, .text = "", .command = command});
}

void add_fix(const check::ReportedComponent& component, EnvironmentFinding& finding) {
  if (component.runs() || component.fix_summary.empty()) return;
  add_fix(component.name, component.fix_summary, component.fix_commands, finding);
}

void add_fixes(const std::vector<const check::ReportedComponent*>& components,
               EnvironmentFinding& finding) {
  constexpr size_t kFixed = 3;
  for (size_t i = 0; i < components.size() && i < kFixed; ++i) add_fix(*components[i], finding);
}

Culprit culprit_from(const check::ReportedComponent& component, std::string why) {
  Culprit culprit(component.name, component.kind, "", std::move(why));
  culprit.version = component.version;
  return culprit;
}

// "what the check finds failing on your GPU: torch 2.5.1+cu124 (…); …".
std::string failing_list(const std::vector<const check::ReportedComponent*>& components,
                         const check::ReportedEnvironment& environment) {
  constexpr size_t kListed = 5;
  std::string out = "what the check finds failing: ";
  for (size_t i = 0; i < components.size() && i < kListed; ++i)
    out += (i ? "; " : "") + component_sentence(*components[i], environment);
  if (components.size() > kListed)
    out += "; and " + std::to_string(components.size() - kListed) + " more";
  return out;
}

std::vector<const check::ReportedStack*> failing_stacks(
    const check::ReportedEnvironment& environment) {
  std::vector<const check::ReportedStack*> out;
  for (const auto& stack : environment.stacks)
    if (stack.blocks) out.push_back(&stack);
  return out;
}

// What fails, said by the unit a fix moves: a report with stacks names
// "PyTorch 2.15.0+cu132" once, not torch and each nvidia-* wheel in it, and
// gives each stack's fix once, the core's order (PyTorch first). A report
// from before stacks lists components.
void add_what_fails(const std::vector<const check::ReportedComponent*>& components,
                    const check::ReportedEnvironment& environment, EnvironmentFinding& finding) {
  const auto stacks = failing_stacks(environment);
  if (stacks.empty()) {
    finding.evidence.push_back(failing_list(components, environment));
    add_fixes(components, finding);
    return;
  }
  constexpr size_t kListed = 5, kFixed = 3;
  std::string out = "what the check finds failing: ";
  for (size_t i = 0; i < stacks.size() && i < kListed; ++i) {
    const auto& stack = *stacks[i];
    out += (i ? "; " : "") + stack.name + (stack.version.empty() ? "" : " " + stack.version) +
           " (" + stack.evidence + ")";
  }
  if (stacks.size() > kListed) out += "; and " + std::to_string(stacks.size() - kListed) + " more";
  finding.evidence.push_back(out);
  for (size_t i = 0; i < stacks.size() && i < kFixed; ++i) {
    const auto& stack = *stacks[i];
    if (stack.fix_summary.empty()) continue;
    add_fix(stack.name, stack.fix_summary, stack.fix_commands, finding);
  }
  finding.stack_title = stacks.front()->title;
  finding.stack_evidence = stacks.front()->name + ": " + stacks.front()->evidence;
}

std::string every_component_runs(const check::ReportedEnvironment& environment,
                                 const std::string& sm) {
  return "every component the check judged (" + std::to_string(environment.components.size()) +
         ") has code that runs on " + (sm.empty() ? "your GPU" : sm);
}

// Where every binary on disk has code for the GPU, the code that failed was
// not on disk when the check ran.
constexpr const char* kNotOnDisk =
    "so the code that failed is not among the files the check read: a kernel built at run time "
    "(torch.compile, Triton, a JIT cache), or a process running another environment than the "
    "one checked";

// No kernel image, invalid device function, a library refusing the arch:
// does the component have code for the GPU?
void weigh_arch(Diagnosis& d, const check::ReportedEnvironment& environment,
                EnvironmentFinding& finding) {
  const auto fails = failing(environment);
  const check::ReportedComponent* mine =
      d.component ? environment.component(d.component->name) : nullptr;
  if (mine && (mine->fails() || mine->verdict.is(compat::Verdict::relocatable_only))) {
    finding.verdict = FindingVerdict::confirms;
    finding.evidence.push_back(component_sentence(*mine, environment));
    add_fix(*mine, finding);
    return;
  }
  if (mine && mine->runs()) {
    // PyTorch is where every CUDA call ends up: with PyTorch fine and one
    // other component failing, that one is the cause.
    if (d.component->name == "torch" && fails.size() == 1) {
      d.component = culprit_from(*fails.front(),
                                 "PyTorch raised it, but the check finds PyTorch has code for "
                                 "your GPU and " +
                                     fails.front()->name + " has none");
      finding.verdict = FindingVerdict::confirms;
      finding.evidence.push_back(component_sentence(*fails.front(), environment));
      finding.evidence.push_back(component_sentence(*mine, environment));
      add_fix(*fails.front(), finding);
      return;
    }
    finding.verdict = FindingVerdict::refutes;
    finding.evidence.push_back(component_sentence(*mine, environment));
    if (!fails.empty()) {
      add_what_fails(fails, environment, finding);
    } else {
      finding.evidence.push_back(kNotOnDisk);
    }
    return;
  }
  if (d.component) {
    finding.evidence.push_back("the check judged no CUDA code of " + d.component->name +
                               (d.component->kind == "custom_node"
                                    ? " (a node pack without compiled code of its own)"
                                    : " (a pure-Python package, or one outside what it scanned)"));
  } else if (fails.size() == 1) {
    d.component = culprit_from(*fails.front(),
                               "the traceback names no component, and it is the only one the "
                               "check finds failing");
    finding.verdict = FindingVerdict::confirms;
    finding.evidence.push_back(component_sentence(*fails.front(), environment));
    add_fix(*fails.front(), finding);
    return;
  }
  if (!fails.empty()) {
    // Something in the environment does lack code for the GPU.
    if (!d.component) finding.verdict = FindingVerdict::confirms;
    add_what_fails(fails, environment, finding);
  } else if (!environment.components.empty()) {
    if (!d.component) finding.verdict = FindingVerdict::refutes;
    finding.evidence.push_back(every_component_runs(environment, d.sm));
    finding.evidence.push_back(kNotOnDisk);
  } else {
    finding.evidence.push_back(
        "the check judged no CUDA binaries (give it --venv, --python or "
        "--comfyui to weigh the installed components)");
  }
}

void weigh_ptx_too_new(Diagnosis& d, const check::ReportedEnvironment& environment,
                       EnvironmentFinding& finding) {
  std::vector<const check::ReportedComponent*> too_new;
  for (const auto& component : environment.components) {
    if (component.verdict.is(compat::Verdict::ptx_too_new_for_driver))
      too_new.push_back(&component);
  }
  const check::ReportedComponent* mine =
      d.component ? environment.component(d.component->name) : nullptr;
  if (!too_new.empty()) {
    finding.verdict = FindingVerdict::confirms;
    if (mine && mine->verdict.is(compat::Verdict::ptx_too_new_for_driver)) {
      finding.evidence.push_back(component_sentence(*mine, environment));
      add_fix(*mine, finding);
    } else {
      finding.evidence.push_back(failing_list(too_new, environment));
      add_fixes(too_new, finding);
    }
  } else {
    if (mine) finding.evidence.push_back(component_sentence(*mine, environment));
    // PTX made at run time (Triton, a JIT) is not in any file the check reads.
    finding.evidence.push_back(
        "no binary the check judged holds PTX newer than driver " +
        (environment.driver_version.empty() ? std::string("(none found)")
                                            : environment.driver_version) +
        " compiles; PTX generated at run time (Triton, torch.compile) is not on disk to judge");
  }
}

// "2.5.1+cu124" → "12.4"; "" for a CPU or ROCm build.
std::string torch_cuda(const std::string& torch) {
  const size_t at = torch.find("+cu");
  if (at == std::string::npos) return {};
  const std::string digits = torch.substr(at + 3);
  if (digits.size() < 3 || digits.size() > 4 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return {};
  return digits.substr(0, digits.size() - 1) + "." + digits.back();
}

// The check says per stack whether the driver is too old for it (the CUDA
// major's floor, the GPU's first driver): the diagnosis reads that answer.
void weigh_driver_too_old(const check::ReportedEnvironment& environment,
                          EnvironmentFinding& finding) {
  if (environment.driver_version.empty()) {
    if (!environment.driver_simulated) {
      finding.verdict = FindingVerdict::confirms;
      finding.evidence.push_back(
          "archfit found no NVIDIA driver (libcuda.so.1) on this machine; the CUDA runtime "
          "reports a missing driver as an insufficient one");
    }
    return;
  }
  for (const auto& stack : environment.stacks) {
    if (!stack.verdict.is(compat::Verdict::driver_too_old)) continue;
    finding.verdict = FindingVerdict::confirms;
    finding.evidence.push_back(stack.name + ": " + stack.evidence);
    return;
  }
  const check::ReportedStack* torch = nullptr;
  for (const auto& stack : environment.stacks) {
    if (stack.anchor == "torch") torch = &stack;
  }
  if (torch && !torch->cuda_version.empty() && !torch->cuda_min_driver.empty()) {
    finding.verdict = FindingVerdict::refutes;
    finding.evidence.push_back("driver " + environment.driver_version + " runs CUDA " +
                               torch->cuda_version + " builds (they need " +
                               torch->cuda_min_driver + " or newer); torch " + environment.torch +
                               " is built with CUDA " + torch->cuda_version);
    finding.evidence.push_back(
        "another CUDA runtime may be the one loaded: `archfit check` lists every libcudart a "
        "process could load");
    return;
  }
  const std::string cuda = torch_cuda(environment.torch);
  finding.evidence.push_back(
      "driver " + environment.driver_version +
      (environment.torch.empty() ? "; the check saw no PyTorch to compare its CUDA with"
       : cuda.empty()            ? "; torch " + environment.torch + " is not a CUDA build"
                                 : "; torch " + environment.torch + " is built with CUDA " + cuda +
                            ", and the report does not say which driver that needs"));
}

void weigh_no_device(const check::ReportedEnvironment& environment, EnvironmentFinding& finding) {
  if (environment.torch.ends_with("+cpu")) {
    finding.verdict = FindingVerdict::confirms;
    finding.evidence.push_back("torch " + environment.torch +
                               " is a CPU-only build: it never uses a GPU");
    return;
  }
  const bool simulated = std::any_of(environment.devices.begin(), environment.devices.end(),
                                     [](const check::ReportedDevice& d) { return d.simulated; });
  if (simulated) {
    finding.evidence.push_back(
        "the GPU was named (--gpu), so the check says nothing of which GPUs this machine has");
    return;
  }
  if (environment.devices.empty()) {
    finding.verdict = FindingVerdict::confirms;
    finding.evidence.push_back(environment.driver_version.empty()
                                   ? "archfit found no NVIDIA driver (libcuda.so.1) on this machine"
                                   : "driver " + environment.driver_version +
                                         " reports no GPU on this machine");
    return;
  }
  finding.verdict = FindingVerdict::refutes;
  std::string names;
  for (const auto& device : environment.devices)
    names += (names.empty() ? "" : ", ") + device_line(device);
  finding.evidence.push_back(
      "the driver reports " + names +
      " here; the process that failed did not see it: check CUDA_VISIBLE_DEVICES, and that a "
      "container was started with --gpus all");
}

// Errors the environment cannot confirm (out of memory, asynchronous
// errors, ptxas not knowing an arch, unrecognised text): what it finds
// failing is still worth saying.
void weigh_other(const Diagnosis& d, const check::ReportedEnvironment& environment,
                 EnvironmentFinding& finding) {
  const auto fails = failing(environment);
  if (!fails.empty()) {
    finding.evidence.push_back(failing_list(fails, environment));
  } else if (!environment.components.empty()) {
    finding.evidence.push_back(every_component_runs(environment, d.sm));
  }
}

}  // namespace

void weigh(Diagnosis& d, const check::ReportedEnvironment& environment) {
  EnvironmentFinding finding;
  finding.source = environment.source;
  for (const auto& device : environment.devices) finding.devices.push_back(device_line(device));

  if (kb::is_about_architecture(d.category)) {
    weigh_arch(d, environment, finding);
  } else if (d.category == kb::ErrorCategory::ptx_too_new_for_driver) {
    weigh_ptx_too_new(d, environment, finding);
  } else if (d.category == kb::ErrorCategory::driver_too_old) {
    weigh_driver_too_old(environment, finding);
  } else if (d.category == kb::ErrorCategory::no_device) {
    weigh_no_device(environment, finding);
  } else {
    weigh_other(d, environment, finding);
  }

  const check::ReportedComponent* mine =
      d.component ? environment.component(d.component->name) : nullptr;
  if (mine && !mine->version.empty()) d.component->version = mine->version;
  finding.gpu = mine && !mine->device.empty() ? mine->device
                : environment.devices.empty() ? std::string()
                                              : environment.devices.front().name;
  // The text may not name the GPU; the check knows it.
  if (d.sm.empty()) {
    if (const check::ReportedDevice* device = environment.device_named(mine ? mine->device : ""))
      d.sm = device->sm();
  }
  d.environment = std::move(finding);
}

}  // namespace archfit::diagnose
