#pragma once
// What one distribution needs of others, read from its METADATA's
// Requires-Dist lines (PEP 508), and names compared as pip compares them.
// Enough of PEP 508 to follow a dependency graph: the name, the extras asked
// for, and the extra a requirement is gated on. Version specifiers and
// platform markers are not evaluated: only installed distributions are ever
// looked up, so a requirement whose marker excluded it simply finds none.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace archfit::env {

struct Requirement {
  std::string name;                 // normalized: "nvidia-cublas-cu12"
  std::vector<std::string> extras;  // asked of it: cuda-toolkit[cublas,cudart] → cublas, cudart
  std::string when_extra;           // `; extra == "cublas"`: only when that extra of the
                                    // requiring distribution is asked for; "" when always
  std::string specifier;            // "==12.8.4.1", as written; "" when none
};

// Whether text read from an environment may stand in a command as a
// distribution name (PEP 508: letters and digits, with '.', '_' and '-'
// inside) or a version (PEP 440, a local label allowed: "2.8.0+cu128"). A
// fix writes no command with anything else: a METADATA Name holding `$(…)`
// is refused, not quoted into a pip line (issue 34).
bool is_distribution_name(std::string_view text);
bool is_version(std::string_view text);

// PEP 503 normalization: lower case, each run of '-', '_' and '.' one '-'.
std::string normalize_distribution_name(std::string_view name);

// Compares the release segments of two versions number by number, as PEP
// 440 orders releases: "2.14.1" > "2.5.1", "0.0.32.post2" > "0.0.32.post1",
// "2.10" == "2.10.0". A local label ("+cu124") is ignored; a part that is not
// a number (post2, rc1) compares by its digits, then its text.
int compare_versions(std::string_view a, std::string_view b);

// Whether `version` meets a "==X" or ">=X" requirement (local labels
// ignored); false for any other operator.
bool satisfies(std::string_view version, std::string_view specifier);

// One Requires-Dist value: `triton==3.4.0; platform_system == "Linux"`,
// `torch (==2.8.0)`, `cuda-toolkit[cublas,nvrtc]==13.0.2; extra == "all"`.
// nullopt when it does not start with a distribution name.
std::optional<Requirement> parse_requirement(std::string_view text);

}  // namespace archfit::env
