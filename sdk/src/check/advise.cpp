#include "advise.hpp"

#include <set>

#include "env/requirement.hpp"
#include "loaded_variant.hpp"

namespace archfit::check {

namespace {

// TORCH_CUDA_ARCH_LIST for every device, oldest first: "8.9;12.0".
std::string torch_arch_list(const std::vector<DeviceInfo>& devices) {
  std::set<compat::ComputeCapability> distinct;
  for (const auto& device : devices) distinct.insert(device.cc);
  std::string list;
  for (const auto& cc : distinct) {
    if (!list.empty()) list += ';';
    list += cc.to_string();
  }
  return list;
}

const DeviceInfo* device_named_or_first(const CheckReport& report, const std::string& name) {
  for (const auto& device : report.devices) {
    if (device.name == name) return &device;
  }
  return report.devices.empty() ? nullptr : &report.devices.front();
}

// The PTX ISA the worst-off binary needs the driver to know.
std::optional<binary::Version> newest_ptx_isa(const std::vector<const BinaryResult*>& binaries) {
  std::optional<binary::Version> newest;
  for (const auto* binary : binaries) {
    if (binary->judgement.verdict != compat::Verdict::ptx_too_new_for_driver || !binary->ptx_isa)
      continue;
    if (!newest || *newest < *binary->ptx_isa) newest = binary->ptx_isa;
  }
  return newest;
}

// A fix that is a sentence and the commands that carry it out.
Fix fix_of(std::string summary, std::vector<std::string> commands = {}) {
  Fix fix;
  fix.summary = std::move(summary);
  fix.commands = std::move(commands);
  return fix;
}

Fix driver_update(const std::string& why, const std::optional<compat::DriverVersion>& needed,
                  kb::DriverFamily family) {
  Fix fix;
  fix.summary = "Update the " + nvidia_driver_words(family) +
                (needed ? " to " + needed->to_string() + " or newer" : std::string()) + ": " + why;
  if (needed) fix.driver = needed->to_string();
  return fix;
}

// Why a fix has no command: a word read from the environment that is not
// what its grammar allows (a METADATA Name holding `$(…)`) never goes into
// one, quoted or not (issue 34).
std::string unsafe_word(const std::string& what, const std::string& word) {
  std::string shown = word.substr(0, 60) + (word.size() > 60 ? "…" : "");
  for (auto& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return "Its " + what + " \"" + shown + "\" is not a valid distribution " + what +
         " (PEP 508/440), so archfit writes no command with it";
}

// A CPU-only twin in the place of its CUDA distribution: both removed, then
// the CUDA one installed alone (removing only the CPU one would delete the
// files the two share: packages.yaml `cpu_twins`).
Fix cpu_twin_fix(const kb::CpuTwin& twin, const std::string& version) {
  if (!env::is_version(version))
    return fix_of("Reinstall " + twin.name + " as " + twin.cuda + " alone: remove " + twin.cpu +
                  " and " + twin.cuda + " first. " + unsafe_word("version", version));
  return fix_of("Reinstall " + twin.name + " as " + twin.cuda + " " + version + " alone: remove " +
                    twin.cpu + " and " + twin.cuda + " first, since removing " + twin.cpu +
                    " alone deletes files the two share",
                {"pip uninstall -y " + twin.cpu + " " + twin.cuda,
                 "pip install " + twin.cuda + "==" + version});
}

// A package that ships one library per CUDA release (bitsandbytes): the
// copies that run on every device although the one loaded does not.
std::vector<std::string> copies_that_run(const ComponentResult& component,
                                         const kb::Component& knowledge) {
  std::vector<std::string> copies;
  for (const auto& binary : component.binaries) {
    const std::string cuda = cuda_release_of_copy(binary.path, knowledge.library_per_cuda);
    if (cuda.empty() || binary.per_device.empty()) continue;
    const bool runs = std::none_of(binary.per_device.begin(), binary.per_device.end(),
                                   [](compat::Verdict v) { return compat::is_failure(v); });
    if (runs) copies.push_back(cuda);
  }
  return copies;
}

// The fix for a distribution, pack or library whose own code has no image.
Fix no_image_fix(const ComponentResult& component, const DeviceInfo& device,
                 const AdviseContext& context) {
  const auto& kb = context.kb;
  const env::Component& which = component.component;
  const std::string arch_list = torch_arch_list(context.report.devices);
  if (which.kind == env::ComponentKind::custom_node) {
    return fix_of("Rebuild the " + which.name + " node pack's compiled extension for " +
                      device.cc.sm_name() + ", or install a release of it built for this GPU",
                  {"cd \"" + which.root.string() + "\" && TORCH_CUDA_ARCH_LIST=\"" + arch_list +
                   "\" pip install --no-build-isolation --force-reinstall ."});
  }
  if (which.kind == env::ComponentKind::library) {
    return fix_of(which.name + " has no image for " + device.cc.sm_name() +
                  "; replace it with a build for this GPU (nvcc -gencode arch=compute_" +
                  std::to_string(device.cc.sm()) + ",code=sm_" + std::to_string(device.cc.sm()) +
                  ")");
  }
  const std::string key = env::normalize_distribution_name(which.name);
  Fix fix;
  if (const kb::Component* knowledge = kb.component_for(key)) {
    // A release known to run beside the torch installed now.
    if (!knowledge->releases.empty() && !context.torch.torch.empty()) {
      if (knowledge->name == "xformers") {
        if (const auto* release = xformers_for(context.torch.torch, context.report.devices, kb)) {
          fix.summary = "Install xformers " + release->version + ", the newest release for torch " +
                        context.torch.torch + " that runs on " + device.cc.sm_name();
          fix.commands = {"pip install xformers==" + release->version};
          fix.requirements = {"xformers==" + release->version};
          return fix;
        }
      }
    }
    if (!knowledge->library_per_cuda.empty()) {
      const auto copies = copies_that_run(component, *knowledge);
      if (!copies.empty()) {
        const std::string& cuda = copies.back();  // "126"
        const std::string release = cuda.substr(0, cuda.size() - 1) + "." + cuda.back();
        std::string library = knowledge->library_per_cuda;
        library.replace(library.find("{cuda}"), 6, cuda);
        const bool windows =
            std::any_of(component.binaries.begin(), component.binaries.end(),
                        [](const BinaryResult& b) { return b.path.extension() == ".dll"; });
        fix.summary = which.name + " " + which.version + " also carries " + library +
                      (windows ? ".dll" : ".so") + ", which runs on " + device.cc.sm_name() +
                      ": it loads that copy beside "
                      "a torch for CUDA " +
                      release + " (as the PyTorch fix may install), or with " +
                      knowledge->cuda_override_env + "=" + cuda + " when CUDA " + release +
                      "'s runtime is installed";
        return fix;
      }
    }
    if (const auto advice = kb.component_advice(key, device.cc)) {
      for (const auto* known : advice->fixes) {
        if (!fix.summary.empty()) fix.summary += "; ";
        fix.summary += known->summary;
      }
      fix.commands = advice->commands;
      if (fix.commands.empty() && !advice->rebuild_command.empty())
        fix.commands.push_back(advice->rebuild_command);
      if (!fix.summary.empty() || !fix.commands.empty()) {
        if (fix.summary.empty())
          fix.summary = "Rebuild " + which.name + " for " + device.cc.sm_name();
        if (knowledge->name == "xformers") {
          // Image tools use xformers only where it is there.
          fix.alternatives.push_back(
              fix_of("Remove xformers: ComfyUI and diffusers fall back to PyTorch's own attention",
                     {"pip uninstall -y xformers"}));
        }
        return fix;
      }
    }
  }
  if (kb.packages().is_binary_only(key)) {
    return fix_of("No installed build of " + which.name + " " + which.version +
                  " has an image for " + device.cc.sm_name() +
                  ", and it is published as binaries only: install a release of " + which.name +
                  " built for this GPU if there is one, or use another package for this GPU");
  }
  const std::string summary = "No installed build of " + which.name + " " + which.version +
                              " has an image for " + device.cc.sm_name() +
                              "; install a release built for it, or rebuild it from its source "
                              "distribution for this GPU";
  if (!env::is_distribution_name(which.name))
    return fix_of(summary + ". " + unsafe_word("name", which.name));
  return fix_of(summary, {"TORCH_CUDA_ARCH_LIST=\"" + arch_list +
                          "\" pip install --no-build-isolation --no-binary " + which.name +
                          " --force-reinstall " + which.name});
}

// A stack that does not load. No command yet: installing the wheel that
// holds the library is right only where the stack's own loader finds it
// there (a member's RPATH, or torch preloading it), and a build of the
// stack for the environment's CUDA runtime is a fix archfit must judge
// before it prints it (issue 36, "every printed fix judged").
Fix missing_library_fix(const StackResult& stack) {
  std::string what;
  for (const auto& missing : stack.missing_libraries) {
    what += std::string(what.empty() ? "" : ", ") + missing.library + " (from " +
            missing.distribution + ")";
  }
  return fix_of("Install a build of " + stack.name +
                " made for this environment's CUDA; the installed one links " + what +
                ", which nothing here provides");
}

}  // namespace

Fix advise_stack(const StackResult& stack, const AdviseContext& context) {
  if (!compat::is_failure(stack.verdict)) return {};
  if (stack.verdict == compat::Verdict::missing_library) return missing_library_fix(stack);
  const auto& report = context.report;
  const DeviceInfo* device = device_named_or_first(report, stack.device);
  if (!device) return {};
  if (stack.verdict == compat::Verdict::no_cuda_build) {
    if (const auto* twin = context.kb.packages().cpu_twin_of(stack.anchor))
      return cpu_twin_fix(*twin, stack.version);
  }
  if (stack.verdict == compat::Verdict::wrong_platform) {
    const auto* architecture = context.kb.architecture(device->cc);
    const bool jetson = architecture && architecture->platform == kb::DriverPlatform::jetson;
    return fix_of("Install " + stack.name + " on the " + device->machine +
                  " machine itself, where pip " + "picks its " + device->machine + " wheels" +
                  (jetson ? "; on Jetson, NVIDIA's PyTorch wheels for your JetPack "
                            "(https://developer.nvidia.com/embedded/downloads)"
                          : ""));
  }
  if (stack.verdict == compat::Verdict::driver_too_old) {
    // The driver must know the GPU and run the stack's CUDA major: the
    // newer of the two numbers is the one to install.
    std::optional<compat::DriverVersion> needed;
    std::string why;
    if (!device->driver_knows_it && device->first_driver) {
      needed = device->first_driver;
      why = "the first that knows " + device->cc.sm_name() + " (" + device->name + ")";
    }
    const bool below_floor = stack.cuda && stack.cuda->min_driver && context.driver &&
                             *context.driver < *stack.cuda->min_driver;
    if (below_floor) {
      if (!needed || *needed < *stack.cuda->min_driver) needed = stack.cuda->min_driver;
      why += std::string(why.empty() ? "" : "; and ") + stack.name + " is built with CUDA " +
             stack.cuda->version + ", whose builds need " + stack.cuda->min_driver->to_string() +
             " or newer";
    }
    Fix fix = driver_update(why.empty() ? stack.evidence : why, needed, report.driver.family);
    if (stack.anchor == "torch" && context.driver && device->driver_knows_it) {
      // Keep the driver: the same torch for an older CUDA major, else the
      // newest build this driver runs.
      auto other =
          same_version_within_driver(report.devices, *context.driver, context.torch, context.kb);
      if (!other) {
        Fix newest = torch_stack_fix(report.devices, context.driver, context.torch, context.kb);
        if (!newest.commands.empty() &&
            (newest.driver.empty() ||
             compat::parse_driver_version(newest.driver) <= *context.driver))
          other = std::move(newest);
      }
      if (other) {
        other->summary = "Or keep the driver: " + other->summary;
        fix.alternatives.push_back(std::move(*other));
      }
    }
    return fix;
  }
  if (stack.anchor == "torch") {
    return torch_stack_fix(report.devices, context.driver, context.torch, context.kb);
  }
  // Any other stack: its fix is that of the member whose code fails.
  std::vector<const BinaryResult*> binaries;
  const ComponentResult* worst = nullptr;
  for (const auto& [c, b] : stack.binaries) {
    const auto& component = report.components[c];
    binaries.push_back(&component.binaries[b]);
    if (!worst || compat::worse(component.verdict, worst->verdict)) worst = &component;
  }
  if (stack.verdict == compat::Verdict::ptx_too_new_for_driver) {
    const auto isa = newest_ptx_isa(binaries);
    return driver_update(
        stack.name + "'s PTX is ISA " + (isa ? isa->to_string() : "?") + ", which driver " +
            report.driver.version + " cannot compile",
        isa ? context.kb.min_driver_for_ptx_isa(*isa, report.driver.family) : std::nullopt,
        report.driver.family);
  }
  if (!worst) return {};
  return no_image_fix(*worst, *device, context);
}

Fix advise_component(const ComponentResult& component, const AdviseContext& context,
                     const std::vector<StackResult>& stacks) {
  if (!component.blocks()) return {};
  for (const auto& stack : stacks) {
    if (stack.name == component.stack && !stack.fix.empty()) return stack.fix;
  }
  const DeviceInfo* device = device_named_or_first(context.report, component.device);
  if (!device) return {};
  if (component.verdict == compat::Verdict::ptx_too_new_for_driver) {
    std::vector<const BinaryResult*> binaries;
    for (const auto& binary : component.binaries) {
      if (binary.reach == Reach::loaded) binaries.push_back(&binary);
    }
    const auto isa = newest_ptx_isa(binaries);
    return driver_update(
        component.component.name + "'s PTX is ISA " + (isa ? isa->to_string() : "?") +
            ", which driver " + context.report.driver.version + " cannot compile",
        isa ? context.kb.min_driver_for_ptx_isa(*isa, context.report.driver.family) : std::nullopt,
        context.report.driver.family);
  }
  if (component.verdict != compat::Verdict::no_image) return {};
  return no_image_fix(component, *device, context);
}

}  // namespace archfit::check
