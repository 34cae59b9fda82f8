#pragma once
// What probe plugins (archfit_plugin.h) add to a check: facts only they can
// learn, such as libtorch's compiled arch flags (plugins/torch_probe). A
// probe that reports "cuda_archs" has that list judged against every device
// by the rule table, as a binary with exactly those images would be.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compat/verdict.hpp"
#include "plugin/plugin_host.hpp"

namespace archfit::check {

struct DeviceInfo;

struct ProbeResult {
  std::string plugin;                       // "torch_probe"
  std::string version;                      // the plugin's
  nlohmann::json facts;                     // its JSON object, as it gave it
  std::vector<std::string> cuda_archs;      // "sm_86", "compute_90"; empty when it has none
  std::vector<compat::Verdict> per_device;  // cuda_archs judged; empty without cuda_archs
  std::string library;  // the library file the facts describe ("library"), if given
  std::string summary;  // one line for people
};

// One result per loaded plugin that has a probe. A probe whose text is not a
// JSON object, or reports "error", becomes a finding instead.
std::vector<ProbeResult> read_probes(const plugin::PluginSet& plugins,
                                     const std::vector<DeviceInfo>& devices,
                                     std::vector<std::string>& findings);

// torch_probe describes the libtorch it was built against. Where the checked
// environment has a torch of its own elsewhere (`environment_torch`, its
// version, with its site-packages folders), each such probe's summary says
// that its facts are not that torch's.
void note_other_torch(std::vector<ProbeResult>& probes, const std::string& environment_torch,
                      const std::vector<std::filesystem::path>& site_packages);

}  // namespace archfit::check
