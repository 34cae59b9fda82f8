#pragma once
// The checklist a person acts on: device and driver, then each component,
// worst first, with its evidence and the exact fix.
#include <ostream>

#include "check/check.hpp"

namespace archfit::cli {

void print_check_text(std::ostream& out, const check::CheckReport& report, bool color);

}  // namespace archfit::cli
