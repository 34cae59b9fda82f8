#include "driver.hpp"

#include <array>

#include "compat_error.hpp"

namespace archfit::compat {

namespace {

[[noreturn]] void reject(std::string_view text) {
  throw CompatError("not a driver version: \"" + std::string(text) +
                    "\"; expected a release such as 570.86.16");
}

}  // namespace

std::strong_ordering DriverVersion::operator<=>(const DriverVersion& other) const {
  if (const auto order = major <=> other.major; order != 0) return order;
  if (const auto order = minor <=> other.minor; order != 0) return order;
  return patch <=> other.patch;
}

bool DriverVersion::operator==(const DriverVersion& other) const { return (*this <=> other) == 0; }

std::string DriverVersion::to_string() const {
  if (!text.empty()) return text;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

DriverVersion parse_driver_version(std::string_view text) {
  std::array<uint32_t, 3> parts{};
  std::size_t part = 0;
  std::size_t digits = 0;
  for (const char c : text) {
    if (c == '.') {
      if (digits == 0 || ++part == parts.size()) reject(text);
      digits = 0;
    } else if (c >= '0' && c <= '9') {
      // Six digits is far beyond any release and keeps the value in range.
      if (++digits > 6) reject(text);
      parts[part] = parts[part] * 10 + static_cast<uint32_t>(c - '0');
    } else {
      reject(text);
    }
  }
  if (digits == 0) reject(text);
  return {parts[0], parts[1], parts[2], std::string(text)};
}

DriverFloorCheck check_driver_for_cuda_major(const DriverVersion& driver, uint32_t cuda_major,
                                             const DriverVersion& floor) {
  DriverFloorCheck check;
  check.floor = floor;
  check.supported = driver >= floor;
  const std::string cuda = "CUDA " + std::to_string(cuda_major) + ".x";
  check.explanation = "driver " + driver.to_string() +
                      (check.supported ? " runs " : " is too old for ") + cuda +
                      " applications (they need driver " + floor.to_string() + " or newer)";
  return check;
}

bool driver_knows_device(const DriverVersion& driver, const DriverVersion& first_driver) {
  return driver >= first_driver;
}

}  // namespace archfit::compat
