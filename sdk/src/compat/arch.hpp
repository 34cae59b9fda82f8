#pragma once
// The architecture model: compute capabilities, the `a`/`f` variants of a
// target, families, and the names people and tools write them with.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "binary/image.hpp"

namespace archfit::compat {

// A device's compute capability, or the one an image targets. Kept as
// {major, minor} because SM numbers do not compare as integers across
// majors: sm_100 is 10.0, sm_103 is 10.3, sm_121 is 12.1.
struct ComputeCapability {
  uint32_t major = 0;
  uint32_t minor = 0;

  static ComputeCapability from_sm(uint32_t sm) { return {sm / 10, sm % 10}; }
  uint32_t sm() const { return major * 10 + minor; }
  std::string to_string() const;  // "12.0"
  std::string sm_name() const;    // "sm_120"

  auto operator<=>(const ComputeCapability&) const = default;
};

// What an image was built for: a capability and the `a`/`f` variant.
struct Arch {
  ComputeCapability cc;
  binary::Variant variant = binary::Variant::plain;

  friend bool operator==(const Arch&, const Arch&) = default;
};

Arch arch_of(const binary::Image& image);

// Families are what `f` targets run within. ptxas 13.0 accepts compute_100f
// for 10.0 and 10.3, compute_110f for 11.0, compute_120f for 12.0 and 12.1:
// every member shares the major, and nothing of another major is accepted.
// nvcc 13.0 has no `f` target below 10.0 (it rejects compute_90f).
bool has_family(ComputeCapability cc);
bool same_family(ComputeCapability a, ComputeCapability b);
std::string family_name(ComputeCapability cc);  // "10.x"

// "sm_120", "compute_120", "12.0" or "120"; throws CompatError for anything
// else, including a suffix (a device has a capability, not a variant).
ComputeCapability parse_compute_capability(std::string_view text);
// The same forms with an optional `a` or `f`: "sm_90a", "compute_100f", "12.0f".
Arch parse_arch(std::string_view text);

// A compile target as NVRTC, nvcc and fatbinary name one: "sm_90a" asks for
// a CUBIN for that arch, "compute_120" for PTX. Parsed here only; the jit
// module and the CLI ask this, never the strings.
struct Target {
  Arch arch;
  bool ptx = false;               // compute_XY: PTX; sm_XY: a CUBIN
  std::string to_string() const;  // "sm_90a", "compute_120"
  std::string number() const;     // what follows the prefix: "90a", "120"
};
// "sm_XY", "sm_XYa", "sm_XYf" or "compute_XY[a|f]"; nullopt for anything
// else ("12.0", "120", "sm_9", "gfx90a").
std::optional<Target> parse_target(std::string_view text);

}  // namespace archfit::compat
