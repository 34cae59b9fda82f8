#include "advise.hpp"

#include <set>

namespace archfit::check {

namespace {

// A Jetson's driver is part of JetPack, and PyPI's torch is not built for it.
constexpr const char* kJetsonTorch =
    "; on Jetson, install the build for your JetPack from NVIDIA's Jetson PyTorch wheels, and "
    "update JetPack rather than a driver";

Fix torch_fix(const DeviceInfo& device, const kb::KnowledgeBase& kb) {
  const auto* architecture = kb.architecture(device.cc);
  const bool jetson = architecture && architecture->platform == kb::DriverPlatform::jetson;
  const auto image = kb.oldest_torch_for(device.cc);
  if (!image) {
    return {"No PyTorch build the knowledge base knows has an image for " + device.cc.sm_name() +
                "; build PyTorch from source with TORCH_CUDA_ARCH_LIST=\"" + device.cc.to_string() +
                "\"" + (jetson ? kJetsonTorch : ""),
            {}};
  }
  std::string summary = "Install torch " + image->version + "+" + image->tag->tag +
                        ", the oldest build with " +
                        (image->via_ptx ? "PTX compute_" : "SASS sm_") +
                        std::to_string(image->arch) + " for this " + device.cc.to_string() + " GPU";
  if (jetson) {
    summary += kJetsonTorch;
  } else if (image->needed_driver) {
    summary += "; it needs NVIDIA driver " + image->needed_driver->to_string() + " or newer";
  }
  return {summary, {image->pip_command}};
}

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

}  // namespace

Fix advise(const ComponentResult& component, const compat::BinaryJudgement& worst,
           const binary::FileScan* worst_scan, const DeviceInfo& device,
           const std::vector<DeviceInfo>& all_devices, const kb::KnowledgeBase& kb) {
  const std::string arch_list = torch_arch_list(all_devices);
  if (component.verdict == compat::Verdict::ptx_too_new_for_driver && worst.chosen && worst_scan) {
    const binary::Version isa = worst_scan->images[*worst.chosen].ptx_isa;
    const auto driver = kb.min_driver_for_ptx_isa(isa);
    return {"Update the NVIDIA driver" +
                (driver ? " to " + driver->to_string() + " or newer" : std::string()) + ": " +
                component.component.name + "'s PTX is ISA " + isa.to_string() +
                ", which this driver cannot compile",
            {}};
  }
  if (component.verdict != compat::Verdict::no_image) return {};

  const env::Component& which = component.component;
  if (which.kind == env::ComponentKind::distribution) {
    if (which.name == "torch") return torch_fix(device, kb);
    if (const auto advice = kb.component_advice(which.name, device.cc)) {
      Fix fix;
      for (const auto* known : advice->fixes) {
        if (!fix.summary.empty()) fix.summary += "; ";
        fix.summary += known->summary;
      }
      fix.commands = advice->commands;
      if (fix.commands.empty() && !advice->rebuild_command.empty())
        fix.commands.push_back(advice->rebuild_command);
      if (fix.summary.empty())
        fix.summary = "Rebuild " + which.name + " for " + device.cc.sm_name();
      return fix;
    }
    return {"No installed build of " + which.name + " " + which.version + " has an image for " +
                device.cc.sm_name() +
                "; install a release built for it, or rebuild it from source for this GPU",
            {"TORCH_CUDA_ARCH_LIST=\"" + arch_list +
             "\" pip install --no-build-isolation --no-binary " + which.name +
             " --force-reinstall " + which.name}};
  }
  if (which.kind == env::ComponentKind::custom_node) {
    return {"Rebuild the " + which.name + " node pack's compiled extension for " +
                device.cc.sm_name() + ", or install a release of it built for this GPU",
            {"cd \"" + which.root.string() + "\" && TORCH_CUDA_ARCH_LIST=\"" + arch_list +
             "\" pip install --no-build-isolation --force-reinstall ."}};
  }
  return {which.name + " has no image for " + device.cc.sm_name() +
              "; replace it with a build for this GPU (" + "nvcc -gencode arch=compute_" +
              std::to_string(device.cc.sm()) + ",code=sm_" + std::to_string(device.cc.sm()) + ")",
          {}};
}

}  // namespace archfit::check
