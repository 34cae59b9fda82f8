#include "node_labels_command.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "archfit/archfit_version.h"
#include "env/python_locate.hpp"
#include "fleet/fleet_config.hpp"
#include "fleet/node_labels.hpp"
#include "run_settings.hpp"
#include "session/session.hpp"
#include "sys/file_io.hpp"
#include "sys/trust.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::cli {

namespace fs = std::filesystem;

namespace {

class LabelsWriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The probe's GPU and driver with the environment's paths
// (none: the node alone).
ProbeOptions probe_for(const ProbeOptions& node, const fleet::FleetEnvironment& environment) {
  ProbeOptions probe;
  probe.gpus = node.gpus;
  probe.driver = node.driver;
  probe.venvs = environment.venvs;
  probe.python = environment.python;
  probe.comfyui = environment.comfyui;
  probe.custom_nodes = environment.custom_nodes;
  probe.site_packages = environment.site_packages;
  probe.wheels = environment.wheels;
  return probe;
}

fleet::EnvironmentVerdict judge(session::Session& session, const ProbeOptions& node,
                                const fleet::FleetEnvironment& environment) {
  fleet::EnvironmentVerdict verdict{environment.name, check::OverallVerdict::unknown, ""};
  try {
    std::ostringstream warnings;
    check::CheckRequest options =
        probe_for(node, environment).check_request("archfit check", warnings);
    for (const auto& path : environment.paths) options.paths.push_back(sys::path_of_utf8(path));
    const check::CheckReport report = session.check(options);
    verdict.verdict = report.verdict;
    verdict.summary = report.summary;
  } catch (const check::CheckError& error) {
    verdict.summary = error.what();
  } catch (const env::LocateError& error) {
    verdict.summary = error.what();
  }
  return verdict;
}

// The whole file or nothing (sys::replace_whole_file). Often run as root:
// the folder must be one no other user can write to, else they could plant
// a link under the temporary name, or swap the folder.
void replace_file(const fs::path& target, const std::string& text) {
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (const std::string untrusted = sys::untrusted_because(folder, "node labels");
      !untrusted.empty())
    throw LabelsWriteError("refusing to write in " + folder.string() + ": " + untrusted);
  if (const std::string problem = sys::replace_whole_file(target, text); !problem.empty())
    throw LabelsWriteError(problem);
}

std::string node_words(const check::CheckReport& node) {
  std::string out;
  for (const auto& device : node.devices)
    out += (out.empty() ? "" : ", ") + device.name + " (" + device.cc.sm_name() + ")";
  if (out.empty()) out = "no GPU";
  return out + "; driver " + (node.driver.version.empty() ? "none" : node.driver.version);
}

}  // namespace

int write_node_labels(const ProbeOptions& probe, const LabelsRequest& request,
                      std::ostream& errors) {
  if (request.format != "nfd") {
    errors << "archfit check: --labels " << request.format
           << ": the one format known is nfd (node-feature-discovery's feature file)\n";
    return 2;
  }
  if (!probe.site_packages.empty() || !probe.venvs.empty() || !probe.python.empty() ||
      !probe.comfyui.empty() || !probe.custom_nodes.empty() || !probe.wheels.empty()) {
    errors << "archfit check --labels: name the environments in --labels-config (each becomes "
              "archfit.dev/fits.<name>), not on the command line\n";
    return 2;
  }
  try {
    std::vector<fleet::FleetEnvironment> environments;
    if (!request.config.empty())
      environments = fleet::read_fleet_config(sys::path_of_utf8(request.config)).environments;

    // One knowledge base for every check below: the Session reads it once.
    session::Session session(probe.session_settings(run_settings(errors)));
    check::CheckRequest node_options =
        probe_for(probe, fleet::FleetEnvironment{}).check_request("archfit check", errors);
    node_options.probe_only_when_nothing_to_scan = true;
    const check::CheckReport node = session.check(node_options);

    std::vector<fleet::EnvironmentVerdict> verdicts;
    for (const auto& environment : environments)
      verdicts.push_back(judge(session, probe, environment));

    const auto now = std::chrono::system_clock::now();
    std::optional<std::chrono::system_clock::time_point> expires;
    if (request.ttl_seconds) expires = now + std::chrono::seconds(request.ttl_seconds);
    const std::string heading = std::string("archfit ") + ARCHFIT_VERSION_STRING +
                                ": node labels for node-feature-discovery; " + node_words(node);
    const std::string text =
        fleet::nfd_feature_file(fleet::node_labels(node, verdicts), heading, expires);
    // NFD drops a bigger file whole, the node's own labels with it, and says
    // so only in its own log: better no new file and a reason here.
    if (const std::string too_big = fleet::nfd_size_problem(text.size(), environments.size());
        !too_big.empty()) {
      errors << "archfit check --labels: " << too_big << '\n';
      return 2;
    }
    if (request.output.empty() || request.output == "-") {
      std::cout << text;
    } else {
      replace_file(sys::path_of_utf8(request.output), text);
    }
    return 0;
  } catch (const fleet::FleetConfigError& error) {
    errors << "archfit check --labels-config: " << error.what() << '\n';
  } catch (const check::CheckError& error) {
    errors << "archfit check --labels: " << error.what() << '\n';
  } catch (const env::LocateError& error) {
    errors << "archfit check --labels: " << error.what() << '\n';
  } catch (const LabelsWriteError& error) {
    errors << "archfit check --labels-output: " << error.what() << '\n';
  }
  return 2;
}

}  // namespace archfit::cli
