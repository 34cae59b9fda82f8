#include "verdict.hpp"

#include <array>
#include <utility>

namespace archfit::compat {

namespace {

// In badness order, best first; worst_of and badness both read it.
constexpr std::array<std::pair<Verdict, std::string_view>, 9> kVerdicts = {{
    {Verdict::unknown, "unknown"},
    {Verdict::no_device_code, "no-device-code"},
    {Verdict::relocatable_only, "relocatable-only"},
    {Verdict::native, "native"},
    {Verdict::ptx_jit, "ptx-jit"},
    {Verdict::ptx_too_new_for_driver, "ptx-too-new-for-driver"},
    {Verdict::driver_too_old, "driver-too-old"},
    {Verdict::no_image, "no-image"},
    {Verdict::wrong_platform, "wrong-platform"},
}};

}  // namespace

std::string_view to_string(Verdict verdict) {
  for (const auto& [value, name] : kVerdicts) {
    if (value == verdict) return name;
  }
  return "unknown";
}

std::optional<Verdict> verdict_from_string(std::string_view name) {
  for (const auto& [value, known] : kVerdicts) {
    if (known == name) return value;
  }
  return std::nullopt;
}

bool is_failure(Verdict verdict) {
  return verdict == Verdict::no_image || verdict == Verdict::ptx_too_new_for_driver ||
         verdict == Verdict::driver_too_old || verdict == Verdict::wrong_platform;
}

bool is_warning(Verdict verdict) { return verdict == Verdict::ptx_jit; }

int badness(Verdict verdict) {
  for (std::size_t i = 0; i < kVerdicts.size(); ++i) {
    if (kVerdicts[i].first == verdict) return static_cast<int>(i);
  }
  return 0;
}

Verdict worst_of(std::span<const Verdict> verdicts) {
  Verdict worst = Verdict::no_device_code;
  for (const Verdict verdict : verdicts) {
    if (badness(verdict) > badness(worst)) worst = verdict;
  }
  return worst;
}

}  // namespace archfit::compat
