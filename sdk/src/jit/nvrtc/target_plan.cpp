#include "target_plan.hpp"

#include <algorithm>
#include <vector>

#include "compat/rules.hpp"
#include "kb/knowledge_base.hpp"

namespace archfit::jit {

namespace {

using compat::ComputeCapability;

std::string nvrtc_name(const NvrtcVersion& version) {
  return version.major == 0 ? std::string("this NVRTC") : "NVRTC " + version.to_string();
}

// "CUDA 12.8", from the knowledge base's first_cuda for the device's arch.
std::string first_cuda(const TargetPlanOptions& options, ComputeCapability device) {
  if (!options.kb) return {};
  const auto* entry = options.kb->architecture(device);
  return entry ? entry->first_cuda : std::string();
}

// What to install to compile SASS for a device newer than NVRTC knows.
std::string newer_nvrtc(const TargetPlanOptions& options, ComputeCapability device) {
  const std::string first = first_cuda(options, device);
  if (first.empty()) {
    return "an NVRTC newer than " +
           (options.nvrtc.major ? options.nvrtc.to_string() : std::string("this one")) +
           " that lists " + device.sm_name() + " in nvrtcGetSupportedArchs";
  }
  return "an NVRTC of CUDA " + first + " or newer for " + device.sm_name();
}

}  // namespace

TargetPlan plan_target(ComputeCapability device, std::span<const int> supported,
                       const TargetPlanOptions& options) {
  std::vector<ComputeCapability> archs;
  for (const int sm : supported) {
    if (sm > 0) archs.push_back(ComputeCapability::from_sm(static_cast<uint32_t>(sm)));
  }
  std::sort(archs.begin(), archs.end());
  archs.erase(std::unique(archs.begin(), archs.end()), archs.end());
  const std::string nvrtc = nvrtc_name(options.nvrtc);
  if (archs.empty())
    throw NoTargetError(nvrtc + " reports no supported architectures; it cannot compile for " +
                        device.sm_name() + ".");

  if (std::binary_search(archs.begin(), archs.end(), device))
    return {device.sm_name(), ImageFormat::cubin, device, true,
            nvrtc + " compiles " + device.sm_name() + " SASS for the device itself."};

  // The rule table decides what runs: SASS of the same major at a lower
  // minor, else PTX of any arch at or below the device.
  for (auto it = archs.rbegin(); it != archs.rend(); ++it) {
    if (compat::sass_runs_on({*it, binary::Variant::plain}, device)) {
      return {it->sm_name(), ImageFormat::cubin, *it, false,
              nvrtc + " does not know " + device.sm_name() + "; " + it->sm_name() +
                  " SASS runs on " + device.to_string() + " devices."};
    }
  }
  const bool newer_than_all = archs.back() < device;
  if (options.allow_ptx) {
    for (auto it = archs.rbegin(); it != archs.rend(); ++it) {
      if (!compat::ptx_jits_for({*it, binary::Variant::plain}, device)) continue;
      const std::string ptx = "compute_" + std::to_string(it->sm());
      std::string reason = nvrtc + " does not know " + device.sm_name() + "; PTX for " + ptx +
                           " is left to the driver to JIT";
      if (newer_than_all) reason += " (" + newer_nvrtc(options, device) + " would compile SASS)";
      return {ptx, ImageFormat::ptx, *it, false, reason + "."};
    }
  }

  if (archs.front() < device) {  // PTX would have run, but was not allowed
    throw NoTargetError(nvrtc + " does not know " + device.sm_name() +
                        " and PTX was not allowed: install " + newer_nvrtc(options, device) +
                        " and point ARCHFIT_NVRTC at it.");
  }
  // Older than every arch NVRTC knows: nothing it makes runs there.
  std::string install = "an NVRTC of an older CUDA that still targets " + device.sm_name();
  const std::string first = first_cuda(options, device);
  if (options.nvrtc.major > 0) {
    install = "an NVRTC older than CUDA " + std::to_string(options.nvrtc.major) + ".0" +
              (first.empty() ? std::string() : " (and of CUDA " + first + " or newer)") +
              " that still targets " + device.sm_name();
    if (options.nvrtc.major - 1 >= 11)
      install +=
          ", e.g. pip install nvidia-cuda-nvrtc-cu" + std::to_string(options.nvrtc.major - 1);
  }
  throw NoTargetError(nvrtc + " cannot compile for " + device.sm_name() +
                      ": its oldest target is " + archs.front().sm_name() +
                      ", and neither SASS nor PTX of a newer arch runs on an older GPU. Install " +
                      install + ", and point ARCHFIT_NVRTC at it.");
}

TargetPlan plan_target(ComputeCapability device, const Nvrtc& nvrtc, const kb::KnowledgeBase* kb,
                       bool allow_ptx) {
  return plan_target(device, nvrtc.info().supported_archs,
                     TargetPlanOptions{nvrtc.info().version, kb, allow_ptx});
}

void require_known_target(const std::string& target, std::span<const int> supported,
                          const std::string& nvrtc) {
  const auto parsed = compat::parse_target(target);
  if (!parsed) return;
  const int arch = static_cast<int>(parsed->arch.cc.sm());
  if (std::find(supported.begin(), supported.end(), arch) != supported.end()) return;
  std::string known;
  for (const int each : supported)
    known += (known.empty() ? "sm_" : ", sm_") + std::to_string(each);
  throw NoTargetError(nvrtc + " cannot compile for " + target + "; it knows " + known);
}

}  // namespace archfit::jit
