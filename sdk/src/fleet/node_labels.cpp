#include "node_labels.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

#include "archfit/archfit_version.h"
#include "compat/compat_error.hpp"
#include "compat/driver.hpp"

namespace archfit::fleet {

namespace {

bool alphanumeric(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A label name's last part, or a value that is not empty: [A-Za-z0-9] at
// both ends, '-', '_' or '.' between, at most 63 characters.
std::string segment_problem(std::string_view text, std::string_view what) {
  if (text.empty()) return std::string(what) + " is empty";
  if (text.size() > 63)
    return std::string(what) + " is " + std::to_string(text.size()) + " characters (at most 63)";
  if (!alphanumeric(text.front()) || !alphanumeric(text.back()))
    return std::string(what) + " must begin and end with a letter or digit";
  for (const char c : text) {
    if (!alphanumeric(c) && c != '-' && c != '_' && c != '.')
      return std::string(what) + " may hold only letters, digits, '-', '_' and '.'";
  }
  return {};
}

// A DNS subdomain: dot-separated lowercase labels of [a-z0-9-], each
// alphanumeric at both ends; at most 253 characters.
std::string prefix_problem(std::string_view prefix) {
  if (prefix.empty() || prefix.size() > 253) return "the prefix must be 1 to 253 characters";
  size_t start = 0;
  while (start <= prefix.size()) {
    const size_t end = std::min(prefix.find('.', start), prefix.size());
    const std::string_view part = prefix.substr(start, end - start);
    const auto lower_alphanumeric = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    };
    if (part.empty() || part.size() > 63 || !lower_alphanumeric(part.front()) ||
        !lower_alphanumeric(part.back()) || !std::all_of(part.begin(), part.end(), [&](char c) {
          return lower_alphanumeric(c) || c == '-';
        }))
      return "the prefix \"" + std::string(prefix) + "\" is not a DNS subdomain";
    start = end + 1;
  }
  return {};
}

std::string utc_rfc3339(std::chrono::system_clock::time_point when) {
  // std::chrono's calendar, not gmtime_r (POSIX) or gmtime_s (Windows).
  using namespace std::chrono;
  const auto seconds = floor<std::chrono::seconds>(when);
  const auto day = floor<days>(seconds);
  const year_month_day date(day);
  const hh_mm_ss time(seconds - day);
  char text[32];
  std::snprintf(text, sizeof text, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                static_cast<int>(time.seconds().count()));
  return text;
}

}  // namespace

std::string label_name_problem(std::string_view name) {
  const size_t slash = name.rfind('/');
  if (slash != std::string_view::npos) {
    if (auto problem = prefix_problem(name.substr(0, slash)); !problem.empty()) return problem;
    name = name.substr(slash + 1);
  }
  return segment_problem(name, "the name");
}

std::string label_value_problem(std::string_view value) {
  return value.empty() ? std::string() : segment_problem(value, "the value");
}

std::vector<Label> node_labels(const check::CheckReport& node,
                               const std::vector<EnvironmentVerdict>& environments) {
  const std::string prefix(kLabelPrefix);
  std::vector<Label> labels;
  labels.push_back({prefix + "gpus", std::to_string(node.devices.size()),
                    node.devices.empty() ? "no GPU: " + node.no_gpu : ""});
  std::set<uint32_t> archs;
  for (const auto& device : node.devices) archs.insert(device.cc.sm());
  if (!archs.empty()) {
    // One value to select on when the node is uniform; sm.<XY> per arch
    // either way, so that a mixed node is still found by each of its archs.
    labels.push_back(
        {prefix + "sm", archs.size() == 1 ? std::to_string(*archs.begin()) : "mixed", ""});
    for (const uint32_t sm : archs)
      labels.push_back({prefix + "sm." + std::to_string(sm), "true", ""});
  }
  if (!node.driver.version.empty() && label_value_problem(node.driver.version).empty()) {
    labels.push_back({prefix + "driver", node.driver.version, ""});
    // An integer, for node affinity's Gt and Lt.
    try {
      labels.push_back({prefix + "driver.major",
                        std::to_string(compat::parse_driver_version(node.driver.version).major),
                        ""});
    } catch (const compat::CompatError&) {
      // Not a release number: no major to compare.
    }
  }
  if (!node.driver.cuda_version.empty() && label_value_problem(node.driver.cuda_version).empty())
    labels.push_back({prefix + "cuda", node.driver.cuda_version, ""});
  labels.push_back({prefix + "version", ARCHFIT_VERSION_STRING, ""});
  for (const auto& environment : environments) {
    const std::string comment = environment.name + ": " + environment.summary;
    if (environment.verdict == check::OverallVerdict::unknown) {
      // No label: a pod that selects fits.<name>=true does not land here.
      labels.push_back({"", "", comment + " (not labelled: the check could not say)"});
      continue;
    }
    labels.push_back({prefix + "fits." + environment.name,
                      environment.verdict == check::OverallVerdict::fits ? "true" : "false",
                      comment});
  }
  return labels;
}

std::string nfd_feature_file(const std::vector<Label>& labels, std::string_view heading,
                             std::optional<std::chrono::system_clock::time_point> expires) {
  std::string out;
  const auto comment = [&](std::string_view text) {
    // One line each: a newline inside a comment would start a feature.
    std::string line(text);
    std::replace(line.begin(), line.end(), '\n', ' ');
    std::replace(line.begin(), line.end(), '\r', ' ');
    out += "# " + line + "\n";
  };
  comment(heading);
  if (expires) out += "# +expiry-time=" + utc_rfc3339(*expires) + "\n";
  for (const auto& label : labels) {
    if (!label.comment.empty()) comment(label.comment);
    if (!label.name.empty()) out += label.name + "=" + label.value + "\n";
  }
  return out;
}

std::string nfd_size_problem(size_t bytes, size_t environments) {
  if (bytes <= kNfdMaxFeatureFileBytes) return "";
  // How many environments fit, at the size each took here.
  const size_t each = environments == 0 ? bytes : bytes / environments;
  const size_t fitting = each == 0 ? environments : kNfdMaxFeatureFileBytes / each;
  return "the feature file would be " + std::to_string(bytes) + " bytes, over the " +
         std::to_string(kNfdMaxFeatureFileBytes) +
         " node-feature-discovery reads (it drops a bigger file whole, the node's labels with "
         "it); nothing was written. Split the " +
         std::to_string(environments) + " environments of --labels-config into files of about " +
         std::to_string(std::max<size_t>(1, fitting * 9 / 10)) +
         " each, every one run with its own --labels-output in features.d";
}

}  // namespace archfit::fleet
