#include "types.hpp"

#include <cctype>
#include <charconv>
#include <string>

#include "compat/compat_error.hpp"

namespace archfit::kb {
namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::optional<uint32_t> to_number(std::string_view s, size_t max_digits) {
  if (!all_digits(s) || s.size() > max_digits) return std::nullopt;
  uint32_t value = 0;
  std::from_chars(s.data(), s.data() + s.size(), value);
  return value;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "X.Y" with a one- or two-digit major and a one-digit minor.
std::optional<std::pair<uint16_t, uint16_t>> dotted_pair(std::string_view s) {
  const auto dot = s.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto major = to_number(s.substr(0, dot), 2);
  const auto minor = to_number(s.substr(dot + 1), 1);
  if (!major || !minor) return std::nullopt;
  return std::pair{static_cast<uint16_t>(*major), static_cast<uint16_t>(*minor)};
}

}  // namespace

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
  auto pair = dotted_pair(trim(text));
  if (!pair || pair->first == 0) return std::nullopt;
  return PtxIsa{pair->first, pair->second};
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

}  // namespace archfit::kb
