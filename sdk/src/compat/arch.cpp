#include "arch.hpp"

#include <optional>

#include "compat_error.hpp"

namespace archfit::compat {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// At most four digits: enough for any SM number, and no overflow to check.
std::optional<uint32_t> read_number(std::string_view digits) {
  if (digits.empty() || digits.size() > 4) return std::nullopt;
  uint32_t value = 0;
  for (const char c : digits) {
    if (!is_digit(c)) return std::nullopt;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  return value;
}

std::string_view without_prefix(std::string_view text) {
  for (const std::string_view prefix : {"sm_", "compute_"}) {
    if (text.starts_with(prefix)) return text.substr(prefix.size());
  }
  return text;
}

[[noreturn]] void reject(std::string_view text, std::string_view why) {
  throw CompatError("not an architecture: \"" + std::string(text) + "\" (" + std::string(why) +
                    "); expected sm_120, compute_120, 12.0 or 120");
}

}  // namespace

std::string ComputeCapability::to_string() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string ComputeCapability::sm_name() const { return "sm_" + std::to_string(sm()); }

Arch arch_of(const binary::Image& image) {
  return {ComputeCapability::from_sm(image.sm), image.variant};
}

bool has_family(ComputeCapability cc) { return cc.major >= 10; }

bool same_family(ComputeCapability a, ComputeCapability b) {
  return has_family(a) && has_family(b) && a.major == b.major;
}

std::string family_name(ComputeCapability cc) { return std::to_string(cc.major) + ".x"; }

Arch parse_arch(std::string_view text) {
  const bool prefixed = without_prefix(text).size() != text.size();
  std::string_view rest = without_prefix(text);
  Arch arch;
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
    arch.variant =
        rest.back() == 'a' ? binary::Variant::arch_specific : binary::Variant::family_specific;
    rest.remove_suffix(1);
  }
  if (const auto dot = rest.find('.'); dot != std::string_view::npos) {
    if (prefixed) reject(text, "an sm_ name takes the SM number, not major.minor");
    const auto major = read_number(rest.substr(0, dot));
    const std::string_view minor_text = rest.substr(dot + 1);
    // A minor above 9 has no SM number: sm_XY keeps one digit for it.
    if (!major || *major == 0 || minor_text.size() != 1 || !is_digit(minor_text[0])) {
      reject(text, "major.minor wants a non-zero major and a one-digit minor");
    }
    arch.cc = {*major, static_cast<uint32_t>(minor_text[0] - '0')};
    return arch;
  }
  const auto sm = read_number(rest);
  // One digit would be ambiguous ("8": 8.0 or 0.8?), so SM numbers start at 10.
  if (!sm || *sm < 10) reject(text, "an SM number has two to four digits");
  arch.cc = ComputeCapability::from_sm(*sm);
  return arch;
}

ComputeCapability parse_compute_capability(std::string_view text) {
  const Arch arch = parse_arch(text);
  if (arch.variant != binary::Variant::plain) {
    reject(text, "a device has a compute capability; `a` and `f` name build targets");
  }
  return arch.cc;
}

std::string Target::number() const {
  const char* suffix = arch.variant == binary::Variant::arch_specific     ? "a"
                       : arch.variant == binary::Variant::family_specific ? "f"
                                                                          : "";
  return std::to_string(arch.cc.sm()) + suffix;
}

std::string Target::to_string() const { return (ptx ? "compute_" : "sm_") + number(); }

std::optional<Target> parse_target(std::string_view text) {
  const bool ptx = text.starts_with("compute_");
  if (!ptx && !text.starts_with("sm_")) return std::nullopt;
  const std::string_view rest = without_prefix(text);
  // Digits, then at most one `a` or `f`: no major.minor after a prefix.
  const std::string_view digits = !rest.empty() && (rest.back() == 'a' || rest.back() == 'f')
                                      ? rest.substr(0, rest.size() - 1)
                                      : rest;
  if (!read_number(digits)) return std::nullopt;
  try {
    return Target{parse_arch(text), ptx};
  } catch (const CompatError&) {
    return std::nullopt;  // a number under 10
  }
}

}  // namespace archfit::compat
