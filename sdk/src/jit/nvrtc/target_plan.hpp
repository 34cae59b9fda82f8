#pragma once
// Which arch to ask NVRTC for, for a device: exactly its sm_XY when NVRTC
// knows it; else SASS of an arch the rule table says runs on it; else PTX of
// the newest arch NVRTC knows below it, left to the driver to JIT; else an
// error that says which NVRTC to install.
#include <span>
#include <string>

#include "compat/arch.hpp"
#include "nvrtc.hpp"

namespace archfit::kb {
class KnowledgeBase;
}

namespace archfit::jit {

struct TargetPlan {
  std::string target;  // "sm_120", "compute_90": CompileRequest::target
  ImageFormat format = ImageFormat::cubin;
  compat::ComputeCapability arch;  // the capability compiled for
  bool exact = false;              // SASS for exactly the device
  // Why this target, in a sentence: "NVRTC 12.4 does not know sm_120; PTX
  // for compute_90 is left to the driver to JIT (…)".
  std::string reason;
};

struct TargetPlanOptions {
  NvrtcVersion nvrtc;                     // for the messages; {0, 0}: "this NVRTC"
  const kb::KnowledgeBase* kb = nullptr;  // first_cuda of the device's arch, when given
  bool allow_ptx = true;                  // false: SASS or an error
};

// `supported`: nvrtcGetSupportedArchs (SM numbers, any order). Throws
// NoTargetError when no arch in it can run on `device`.
TargetPlan plan_target(compat::ComputeCapability device, std::span<const int> supported,
                       const TargetPlanOptions& options = {});
// The same, for a loaded NVRTC's archs and version.
TargetPlan plan_target(compat::ComputeCapability device, const Nvrtc& nvrtc,
                       const kb::KnowledgeBase* kb = nullptr, bool allow_ptx = true);

// A target named outright (`jit compile --arch`, `jit bundle`): throws
// NoTargetError when `supported` (nvrtcGetSupportedArchs) lacks its arch,
// naming `nvrtc` ("NVRTC 13.0.88") and the archs it does know. A name that is
// not a target at all is left for NVRTC's request check to refuse.
void require_known_target(const std::string& target, std::span<const int> supported,
                          const std::string& nvrtc);

}  // namespace archfit::jit
