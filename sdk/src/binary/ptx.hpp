#pragma once
// The two lines of a PTX module that decide where it can run: `.version`
// (the PTX ISA, which the driver must know) and `.target` (the arch).
#include <optional>
#include <string>
#include <string_view>

#include "image.hpp"

namespace archfit::binary {

struct PtxHeader {
  Version version;
  std::string target;  // "sm_90a"
  uint32_t sm = 0;
  Variant variant = Variant::plain;
};

// Reads the directives before the first non-directive statement; nullopt
// when `text` does not start like a PTX module.
std::optional<PtxHeader> read_ptx_header(std::string_view text);

}  // namespace archfit::binary
