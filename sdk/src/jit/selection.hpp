#pragma once
// Which path an op's kernel module takes on a device (docs/design.md, the jit
// step of "The flow of data"), decided by the one rule table (compat/): a
// prebuilt SASS image that runs there; else prebuilt PTX the driver can
// JIT-compile; else NVRTC from the module's source, for a target plan_target
// picks; else an error that says what would make it work.
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "binary/image.hpp"
#include "compat/rules.hpp"
#include "jit/nvrtc/target_plan.hpp"

namespace archfit::jit {

enum class JitPath {
  prebuilt_sass,  // the driver loads an image built for the device
  driver_ptx,     // the driver JIT-compiles prebuilt PTX
  nvrtc,          // archfit compiles the source (through the kernel cache)
};
std::string_view to_string(JitPath path);  // "prebuilt-sass" | "driver-ptx-jit" | "nvrtc"

struct Selection {
  JitPath path = JitPath::nvrtc;
  std::string arch;                        // "sm_90", "compute_80", or the NVRTC target "sm_120"
  std::string reason;                      // a sentence: why this path
  std::optional<TargetPlan> nvrtc_target;  // JitPath::nvrtc only
};

// Nothing can run the module on the device; the message says why and what to
// install or ship.
class SelectionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `prebuilt`: the scan of the module's prebuilt bytes (an empty FileScan when
// it has none). `plan_nvrtc` is asked only when the source is needed; it may
// throw (no NVRTC found, or one too old), which becomes a SelectionError that
// also says why the prebuilt images did not do.
Selection select_path(const binary::FileScan& prebuilt, compat::ComputeCapability device,
                      const compat::Driver& driver, bool has_source,
                      const std::function<TargetPlan()>& plan_nvrtc);

}  // namespace archfit::jit
