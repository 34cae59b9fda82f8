#pragma once
// The value types the knowledge base speaks in: compute capabilities, PTX ISA
// versions and driver versions, and how each is read from text.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "binary/image.hpp"
#include "compat/arch.hpp"
#include "compat/driver.hpp"

namespace archfit::kb {

// The knowledge base speaks in the rule table's types: one compute
// capability, one driver release, one PTX ISA version in the whole project.
using ComputeCapability = compat::ComputeCapability;
using DriverVersion = compat::DriverVersion;
using PtxIsa = binary::Version;  // `.version 8.7`

// Whose numbering a driver release follows. Linux and Windows drivers of one
// branch carry different numbers (CUDA 12.8 GA: 570.26 and 570.65), and under
// WSL2 the driver is the Windows one (drivers.yaml).
enum class DriverFamily { linux_driver, windows_driver };
// "Linux" or "Windows", for sentences.
const char* driver_family_name(DriverFamily family);

// Forgiving readers for text from YAML files and users: surrounding space
// and case are ignored, and "sm120" reads like "sm_120". nullopt for anything
// the rule table's parsers reject, including `a`/`f` variants (a device has none).
std::optional<ComputeCapability> parse_compute_capability(std::string_view text);
// "8.7"; nullopt unless it is MAJOR.MINOR.
std::optional<PtxIsa> parse_ptx_isa(std::string_view text);
// One to three dot-separated numbers: "570", "570.86", "570.86.16".
std::optional<DriverVersion> parse_driver_version(std::string_view text);

// The number readers under all of the above and the YAML loader.
// Decimal digits only, at most `max_digits` of them.
std::optional<uint32_t> small_number(std::string_view text, size_t max_digits);
// "2.10", "12.8": two numbers of up to three digits with a dot, compared as numbers.
std::optional<std::pair<uint32_t, uint32_t>> two_part_version(std::string_view text);

}  // namespace archfit::kb
