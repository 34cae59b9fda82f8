#pragma once
// Driver releases, and the rules that compare them with what a build or a
// GPU needs (minor-version compatibility, the first driver of an
// architecture). The numbers — which driver a CUDA major needs, which PTX ISA
// a driver knows — are data in the knowledge base, not here.
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

struct DriverFloorCheck {
  bool supported = false;
  DriverVersion floor;      // the driver CUDA `cuda_major`.x needs at least
  std::string explanation;  // "driver 570.86.16 is too old for CUDA 13.x applications (…)"
};

// Whether `driver` runs applications built with any CUDA `cuda_major`.x
// runtime (NVIDIA's minor-version compatibility: one floor per major; the
// knowledge base holds the numbers, ptx_isa.yaml `cuda_major_floors`). PTX
// from a newer minor still needs a newer driver: that is the PTX ISA check,
// not this one.
DriverFloorCheck check_driver_for_cuda_major(const DriverVersion& driver, uint32_t cuda_major,
                                             const DriverVersion& floor);

// Whether `driver` knows a GPU whose architecture first shipped with the
// CUDA toolkit whose driver is `first_driver` (the knowledge base's
// `architectures`): an older driver does not list the device at all.
bool driver_knows_device(const DriverVersion& driver, const DriverVersion& first_driver);

}  // namespace archfit::compat
