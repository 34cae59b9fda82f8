#include "probes.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "check.hpp"
#include "compat/rules.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::check {
namespace {

using nlohmann::json;

std::string text_of(const json& facts, const char* key) {
  const auto it = facts.find(key);
  return it != facts.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<std::string> archs_of(const json& facts) {
  std::vector<std::string> archs;
  const auto it = facts.find("cuda_archs");
  if (it == facts.end() || !it->is_array()) return archs;
  for (const auto& entry : *it) {
    if (entry.is_string()) archs.push_back(entry.get<std::string>());
  }
  return archs;
}

// "libtorch 2.7.1 (/…/libtorch_cpu.so), CUDA 12.6, cuDNN 9.5.1, built for
// sm_50 … sm_90" for torch_probe's facts; the plugin's name and version
// otherwise.
// The library file is named because the probe describes the libtorch it was
// built against, which need not be the torch of the environment checked.
std::string summarise(const json& facts, const ProbeResult& result) {
  const std::string torch = text_of(facts, "torch_version");
  if (torch.empty()) return result.plugin + " " + result.version;
  std::string line = "libtorch " + torch;
  if (const std::string library = text_of(facts, "library"); !library.empty())
    line += " (" + library + ")";
  if (!facts.value("cuda_build", false)) return line + ", a CPU-only build (no CUDA kernels)";
  if (const std::string cuda = text_of(facts, "cuda_version"); !cuda.empty())
    line += ", CUDA " + cuda;
  if (const std::string cudnn = text_of(facts, "cudnn_version"); !cudnn.empty())
    line += ", cuDNN " + cudnn;
  if (!result.cuda_archs.empty()) {
    line += ", built for";
    for (const auto& arch : result.cuda_archs) line += " " + arch;
  }
  return line;
}

}  // namespace

std::vector<ProbeResult> read_probes(const plugin::PluginSet& plugins,
                                     const std::vector<DeviceInfo>& devices,
                                     std::vector<std::string>& findings) {
  std::vector<ProbeResult> results;
  for (const auto& rejected : plugins.rejected)
    findings.push_back("plugin " + rejected.path.string() + " was not loaded: " + rejected.reason);
  for (const auto& plugin : plugins.loaded) {
    if (plugin.probe_json.empty()) continue;
    const json facts = json::parse(plugin.probe_json, nullptr, false);
    if (!facts.is_object()) {
      findings.push_back("plugin " + plugin.name +
                         ": its probe gave text that is not a JSON object");
      continue;
    }
    if (const std::string error = text_of(facts, "error"); !error.empty()) {
      findings.push_back("plugin " + plugin.name + ": " + error);
      continue;
    }
    ProbeResult result;
    result.plugin = plugin.name;
    result.version = plugin.version;
    result.facts = facts;
    result.cuda_archs = archs_of(facts);
    result.library = text_of(facts, "library");
    if (!result.cuda_archs.empty()) {
      for (const auto& device : devices)
        result.per_device.push_back(compat::judge_arch_list(result.cuda_archs, device.cc));
    }
    result.summary = summarise(facts, result);
    results.push_back(std::move(result));
  }
  return results;
}

void note_other_torch(std::vector<ProbeResult>& probes, const std::string& environment_torch,
                      const std::vector<std::filesystem::path>& site_packages) {
  for (auto& probe : probes) {
    if (probe.library.empty()) continue;
    const std::filesystem::path library = sys::path_of_utf8(probe.library).lexically_normal();
    const bool inside =
        std::any_of(site_packages.begin(), site_packages.end(), [&](const auto& dir) {
          const auto relative = library.lexically_relative(dir.lexically_normal());
          return !relative.empty() && *relative.begin() != "..";
        });
    if (!inside)
      probe.summary +=
          "; not the environment's torch " + environment_torch + ", which the scan judges";
  }
}

}  // namespace archfit::check
