#pragma once
// Driver releases, and the oldest driver a CUDA runtime major runs on
// (minor-version compatibility). Which PTX ISA a driver knows is data in the
// knowledge base, not here.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace archfit::compat {

// A Linux driver release: "570.86.16", "580.65.06", "575.51". Missing parts are 0.
struct DriverVersion {
  uint32_t major = 0;
  uint32_t minor = 0;
  uint32_t patch = 0;
  std::string text;  // as given, for messages: "580.65.06" keeps its leading zero

  std::string to_string() const;  // `text`, or the numbers when it is empty

  // Compares the numbers only: "580.65.06" == "580.65.6".
  std::strong_ordering operator<=>(const DriverVersion& other) const;
  bool operator==(const DriverVersion& other) const;
};

// Throws CompatError for text that is not one to three dot-separated numbers.
DriverVersion parse_driver_version(std::string_view text);

// The oldest driver branch on which an application built with CUDA
// `cuda_major`.x runs (NVIDIA's minor-version compatibility table):
// 11 → 450, 12 → 525, 13 → 580. nullopt for majors archfit has no floor for.
std::optional<uint32_t> minor_version_floor(uint32_t cuda_major);

struct DriverFloorCheck {
  bool supported = false;
  uint32_t floor = 0;       // the driver branch CUDA `cuda_major`.x needs
  std::string explanation;  // "driver 570.86.16 runs CUDA 12.x applications (needs ≥ 525)"
};

// Whether `driver` runs applications built with any CUDA `cuda_major`.x
// runtime. PTX from a newer minor still needs a newer driver: that is the
// PTX ISA check, not this one. nullopt when there is no known floor.
std::optional<DriverFloorCheck> check_driver_for_cuda_major(const DriverVersion& driver,
                                                            uint32_t cuda_major);

}  // namespace archfit::compat
