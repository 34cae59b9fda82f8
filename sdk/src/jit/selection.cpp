#include "selection.hpp"

namespace archfit::jit {

std::string_view to_string(JitPath path) {
  switch (path) {
    case JitPath::prebuilt_sass:
      return "prebuilt-sass";
    case JitPath::driver_ptx:
      return "driver-ptx-jit";
    case JitPath::nvrtc:
      break;
  }
  return "nvrtc";
}

Selection select_path(const binary::FileScan& prebuilt, compat::ComputeCapability device,
                      const compat::Driver& driver, bool has_source,
                      const std::function<TargetPlan()>& plan_nvrtc) {
  std::string why_not_prebuilt = "it ships no prebuilt image";
  if (prebuilt.has_device_code()) {
    const compat::BinaryJudgement judgement = compat::judge_binary(prebuilt, device, driver);
    if (judgement.chosen && (judgement.verdict == compat::Verdict::native ||
                             judgement.verdict == compat::Verdict::ptx_jit)) {
      const auto& image = prebuilt.images[*judgement.chosen];
      Selection selection;
      selection.path = judgement.verdict == compat::Verdict::native ? JitPath::prebuilt_sass
                                                                    : JitPath::driver_ptx;
      selection.arch = image.arch_name();
      selection.reason = judgement.explanation.empty() ? judgement.evidence : judgement.explanation;
      return selection;
    }
    why_not_prebuilt = judgement.explanation.empty() ? judgement.evidence : judgement.explanation;
  }
  if (!has_source) {
    throw SelectionError("no image of this module runs on " + device.sm_name() + " (" +
                         why_not_prebuilt +
                         ") and it has no source to compile; ship an image for " +
                         device.sm_name() + " or register the CUDA source");
  }
  Selection selection;
  try {
    selection.nvrtc_target = plan_nvrtc();
  } catch (const std::exception& error) {
    throw SelectionError("no prebuilt image runs on " + device.sm_name() + " (" + why_not_prebuilt +
                         "), and NVRTC cannot compile for it: " + error.what());
  }
  selection.path = JitPath::nvrtc;
  selection.arch = selection.nvrtc_target->target;
  selection.reason = "No prebuilt image runs on " + device.sm_name() + " (" + why_not_prebuilt +
                     "); " + selection.nvrtc_target->reason;
  return selection;
}

}  // namespace archfit::jit
