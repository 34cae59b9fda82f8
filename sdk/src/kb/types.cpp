#include "types.hpp"

#include <cctype>
#include <charconv>
#include <string>

#include "compat/compat_error.hpp"
#include "util/text.hpp"

namespace archfit::kb {
namespace {

using util::trim;

}  // namespace

std::optional<uint32_t> small_number(std::string_view text, size_t max_digits) {
  if (text.empty() || text.size() > max_digits) return std::nullopt;
  uint32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::pair<uint32_t, uint32_t>> two_part_version(std::string_view text) {
  const auto dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto major = small_number(text.substr(0, dot), 3);
  const auto minor = small_number(text.substr(dot + 1), 3);
  if (!major || !minor) return std::nullopt;
  return std::pair{*major, *minor};
}

std::optional<ComputeCapability> parse_compute_capability(std::string_view text) {
  std::string s(trim(text));
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // "sm120" and "compute120" as people type them; the rule table wants the underscore.
  for (std::string_view prefix : {"compute", "sm"}) {
    if (s.size() > prefix.size() && s.starts_with(prefix) &&
        std::isdigit(static_cast<unsigned char>(s[prefix.size()]))) {
      s = std::string(prefix) + '_' + s.substr(prefix.size());
      break;
    }
  }
  // Plausible capabilities only: "5090" is a GPU name, not SM 509.0, so a bare
  // SM number has two or three digits and a major at most two.
  std::string_view digits = s;
  for (std::string_view prefix : {"compute_", "sm_"}) {
    if (digits.starts_with(prefix)) digits.remove_prefix(prefix.size());
  }
  const auto dot = digits.find('.');
  if (dot == std::string_view::npos ? (digits.size() < 2 || digits.size() > 3) : dot > 2)
    return std::nullopt;
  try {
    return compat::parse_compute_capability(s);
  } catch (const compat::CompatError&) {
    return std::nullopt;
  }
}

std::optional<PtxIsa> parse_ptx_isa(std::string_view text) {
  // A one- or two-digit major and a one-digit minor: "8.7", "9.1".
  const auto pair = two_part_version(trim(text));
  if (!pair || pair->first == 0 || pair->first > 99 || pair->second > 9) return std::nullopt;
  return PtxIsa{static_cast<uint16_t>(pair->first), static_cast<uint16_t>(pair->second)};
}

std::optional<DriverVersion> parse_driver_version(std::string_view text) {
  try {
    DriverVersion version = compat::parse_driver_version(trim(text));
    if (version.major == 0) return std::nullopt;
    return version;
  } catch (const compat::CompatError&) {
    return std::nullopt;
  }
}

const char* driver_family_name(DriverFamily family) {
  return family == DriverFamily::windows_driver ? "Windows" : "Linux";
}

}  // namespace archfit::kb
