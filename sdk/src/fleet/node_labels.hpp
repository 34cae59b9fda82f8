#pragma once
// A node's labels for schedulers, from checks run on it (docs/fleet.md): its
// GPUs' arch, its driver, and whether each named environment fits. Written
// as a node-feature-discovery feature file, the format NFD's local source
// reads from /etc/kubernetes/node-feature-discovery/features.d/: one
// `name=value` per line, `#` comments, and `# +expiry-time=` so that labels a
// node stopped refreshing go away.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check/check.hpp"

namespace archfit::fleet {

// Every label archfit writes is in this namespace.
inline constexpr std::string_view kLabelPrefix = "archfit.dev/";

struct Label {
  std::string name;  // "archfit.dev/sm"; "" for a comment line alone
  std::string value;
  std::string comment;  // a `#` line written before it; "" for none
};

// Kubernetes' rules for a label, as NFD applies them: a name of at most 63
// characters, alphanumeric at both ends with '-', '_' or '.' between, after
// an optional DNS-subdomain prefix (at most 253) and '/'; a value empty or of
// the same characters, at most 63. Each returns why not, or "" when valid.
std::string label_name_problem(std::string_view name);
std::string label_value_problem(std::string_view value);

// A check of one named environment on this node.
struct EnvironmentVerdict {
  std::string name;
  check::OverallVerdict verdict = check::OverallVerdict::unknown;
  std::string summary;  // the check's one line, or why it could not run
};

// The node's labels: archfit.dev/gpus, sm (when every GPU has one arch; else
// "mixed"), sm.<XY> per arch, driver, driver.major, cuda, version, and
// fits.<name> per environment (an environment whose verdict is unknown gets
// no label, only its reason as a comment: a pod selecting fits.<name>=true
// does not land there).
std::vector<Label> node_labels(const check::CheckReport& node,
                               const std::vector<EnvironmentVerdict>& environments);

// The largest feature file NFD's local source reads (MaxFeatureFileSize in
// its source/local/local.go since v0.14): a bigger one is passed over whole.
inline constexpr size_t kNfdMaxFeatureFileBytes = 65536;

// Why a feature file of `bytes` for `environments` environments cannot be
// written (over kNfdMaxFeatureFileBytes), saying how to split the config;
// "" when it fits.
std::string nfd_size_problem(size_t bytes, size_t environments);

// The feature file. `expires`: written as `# +expiry-time=` (RFC 3339, UTC).
std::string nfd_feature_file(const std::vector<Label>& labels, std::string_view heading,
                             std::optional<std::chrono::system_clock::time_point> expires);

}  // namespace archfit::fleet
