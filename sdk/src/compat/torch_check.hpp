#pragma once
// PyTorch's own arch check, reproduced so that archfit can say where it and
// torch disagree: torch stays silent about cases that fail ("sm_86 on an
// A100") and warns about cases that work (compute_90 PTX on an RTX 5090).
// archfit's verdicts never use it; see rules.hpp for the real rules.
#include <span>
#include <string>

#include "arch.hpp"

namespace archfit::compat {

// torch.cuda._check_cubins(): passes when any "sm_" entry of
// torch.cuda.get_arch_list() has the device's major (`sm // 10 == major`,
// suffixes stripped). It ignores minors and `compute_` (PTX) entries, and
// an empty list passes (torch checks nothing then).
bool torch_check_cubins_passes(std::span<const std::string> arch_list, ComputeCapability device);

}  // namespace archfit::compat
