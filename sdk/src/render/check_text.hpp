#pragma once
// The checklist a person acts on: device and driver, then each stack,
// failing first, with its evidence and the exact fix, and last the one-line
// answer. `details` adds every CUDA library a process could load and every
// component with each binary's verdict and how it is reached.
#include <ostream>

#include "check/check.hpp"

namespace archfit::render {

void print_check_text(std::ostream& out, const check::CheckReport& report, bool color,
                      bool details = false);

}  // namespace archfit::render
