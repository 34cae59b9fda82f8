#include "requirement.hpp"

#include <algorithm>
#include <cctype>

#include "util/pattern.hpp"
#include "util/text.hpp"

namespace archfit::env {

namespace {

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

using util::trim;

// The value of `extra == "name"` (either quote, either order) in a marker;
// "" when the marker does not test an extra.
std::string extra_in_marker(std::string_view marker) {
  const auto at = marker.find("extra");
  if (at == std::string_view::npos) return {};
  const auto open = marker.find_first_of("'\"", at);
  if (open == std::string_view::npos) return {};
  const auto close = marker.find(marker[open], open + 1);
  if (close == std::string_view::npos) return {};
  return normalize_distribution_name(marker.substr(open + 1, close - open - 1));
}

}  // namespace

bool is_distribution_name(std::string_view text) {
  static const util::Pattern name("[A-Za-z0-9]([A-Za-z0-9._-]{0,198}[A-Za-z0-9])?");
  return name.matches_whole(text);
}

bool is_version(std::string_view text) {
  // PEP 440's public version (the grammar of its appendix, case-insensitive),
  // then an optional local label; at most 100 characters.
  static const util::Pattern version(
      R"(v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?)"
      R"((?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?(?:[-_.]?dev[-_.]?[0-9]*)?)"
      R"((?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?)",
      util::Pattern::Case::insensitive);
  return text.size() <= 100 && version.matches_whole(text);
}

std::string normalize_distribution_name(std::string_view name) {
  std::string out;
  bool separator = false;
  for (const char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      separator = !out.empty();
      continue;
    }
    if (separator) out += '-';
    separator = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::optional<Requirement> parse_requirement(std::string_view text) {
  const auto semicolon = text.find(';');
  std::string_view head = trim(text.substr(0, semicolon));
  Requirement requirement;
  if (semicolon != std::string_view::npos)
    requirement.when_extra = extra_in_marker(text.substr(semicolon + 1));
  size_t end = 0;
  while (end < head.size() && name_char(head[end])) ++end;
  if (end == 0) return std::nullopt;
  requirement.name = normalize_distribution_name(head.substr(0, end));
  head = trim(head.substr(end));
  if (!head.empty() && head.front() == '[') {
    const auto close = head.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view list = head.substr(1, close - 1);
    while (!list.empty()) {
      const auto comma = list.find(',');
      const auto extra = trim(list.substr(0, comma));
      if (!extra.empty()) requirement.extras.push_back(normalize_distribution_name(extra));
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
    head = trim(head.substr(close + 1));
  }
  // "(==2.8.0)" is the older spelling of "==2.8.0".
  if (head.size() >= 2 && head.front() == '(' && head.back() == ')')
    head = trim(head.substr(1, head.size() - 2));
  requirement.specifier = std::string(head);
  return requirement;
}

namespace {

// "2.14.1+cu126" → {"2", "14", "1"}; "0.0.32.post2" → {"0", "0", "32", "post2"}.
std::vector<std::string_view> version_parts(std::string_view version) {
  version = version.substr(0, version.find('+'));
  std::vector<std::string_view> parts;
  while (!version.empty()) {
    const auto dot = version.find('.');
    parts.push_back(version.substr(0, dot));
    if (dot == std::string_view::npos) break;
    version.remove_prefix(dot + 1);
  }
  return parts;
}

// The number a part carries: 14 for "14", 2 for "post2"; -1 for none.
long long part_number(std::string_view part) {
  const auto digits = part.find_first_of("0123456789");
  if (digits == std::string_view::npos) return -1;
  long long value = 0;
  for (size_t i = digits; i < part.size() && std::isdigit(static_cast<unsigned char>(part[i])); ++i)
    value = value * 10 + (part[i] - '0');
  return value;
}

}  // namespace

int compare_versions(std::string_view a, std::string_view b) {
  const auto left = version_parts(a);
  const auto right = version_parts(b);
  for (size_t i = 0; i < std::max(left.size(), right.size()); ++i) {
    const std::string_view l = i < left.size() ? left[i] : "0";
    const std::string_view r = i < right.size() ? right[i] : "0";
    // A number outranks a suffix part at the same place ("1.0" > "1.post1"
    // is not a case torch or xformers ever writes; keep the simple order).
    const auto ln = part_number(l), rn = part_number(r);
    if (ln != rn) return ln < rn ? -1 : 1;
    if (l != r) return l < r ? -1 : 1;
  }
  return 0;
}

bool satisfies(std::string_view version, std::string_view specifier) {
  specifier = trim(specifier);
  if (specifier.starts_with("==")) return compare_versions(version, trim(specifier.substr(2))) == 0;
  if (specifier.starts_with(">=")) return compare_versions(version, trim(specifier.substr(2))) >= 0;
  return false;
}

}  // namespace archfit::env
