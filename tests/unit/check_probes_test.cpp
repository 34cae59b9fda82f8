// check/probes: what probe plugins report, read into the check report, with
// a probe's arch list judged on every device by the rule table.
#include "check/probes.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "check/check.hpp"
#include "compat/arch.hpp"

namespace {

using archfit::check::DeviceInfo;
using archfit::check::read_probes;
using archfit::compat::Verdict;
using archfit::plugin::LoadedPlugin;
using archfit::plugin::PluginSet;

LoadedPlugin probe_plugin(const std::string& name, const std::string& probe_json) {
  LoadedPlugin plugin;
  plugin.name = name;
  plugin.version = "0.1.0";
  plugin.probe_json = probe_json;
  return plugin;
}

std::vector<DeviceInfo> devices_named(const std::vector<std::string>& capabilities) {
  std::vector<DeviceInfo> devices;
  for (const auto& cc : capabilities) {
    DeviceInfo device;
    device.name = "simulated " + cc;
    device.cc = archfit::compat::parse_compute_capability(cc);
    device.simulated = true;
    devices.push_back(device);
  }
  return devices;
}

// torch_probe's facts for torch 2.7.1+cu126 with a usable device.
const char* const kCu126Facts =
    R"({"schema":"archfit.torch-probe/1","torch_version":"2.7.1","cuda_build":true,)"
    R"("library":"/venv/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so",)"
    R"("cuda_version":"12.6","cudnn_version":"9.5.1",)"
    R"("cuda_archs":["sm_50","sm_60","sm_70","sm_75","sm_80","sm_86","sm_90"]})";

TEST(CheckProbes, TorchArchFlagsAreJudgedOnEveryDevice) {
  PluginSet plugins;
  plugins.loaded.push_back(probe_plugin("torch_probe", kCu126Facts));
  std::vector<std::string> findings;
  const auto probes = read_probes(plugins, devices_named({"12.0", "8.9"}), findings);
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_TRUE(findings.empty());
  EXPECT_EQ(probes[0].plugin, "torch_probe");
  EXPECT_EQ(probes[0].cuda_archs.size(), 7u);
  ASSERT_EQ(probes[0].per_device.size(), 2u);
  EXPECT_EQ(probes[0].per_device[0], Verdict::no_image);
  EXPECT_EQ(probes[0].per_device[1], Verdict::native);
  EXPECT_EQ(probes[0].summary,
            "libtorch 2.7.1 (/venv/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so), "
            "CUDA 12.6, cuDNN 9.5.1, built for sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90");
}

TEST(CheckProbes, ACpuOnlyLibtorchSaysSoAndIsJudgedNowhere) {
  PluginSet plugins;
  plugins.loaded.push_back(probe_plugin(
      "torch_probe", R"({"torch_version":"1.13.1","cuda_build":false,"cuda_archs":[]})"));
  std::vector<std::string> findings;
  const auto probes = read_probes(plugins, devices_named({"12.0"}), findings);
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_TRUE(probes[0].per_device.empty());
  EXPECT_EQ(probes[0].summary, "libtorch 1.13.1, a CPU-only build (no CUDA kernels)");
}

TEST(CheckProbes, PluginsWithoutAProbeAddNothing) {
  PluginSet plugins;
  plugins.loaded.push_back(probe_plugin("imagegen_ops", ""));
  std::vector<std::string> findings;
  EXPECT_TRUE(read_probes(plugins, devices_named({"12.0"}), findings).empty());
  EXPECT_TRUE(findings.empty());
}

TEST(CheckProbes, BadProbesAndRejectedPluginsBecomeFindingsNamingThem) {
  PluginSet plugins;
  plugins.loaded.push_back(probe_plugin("garbled", "{not json"));
  plugins.loaded.push_back(probe_plugin("listy", "[1, 2]"));
  plugins.loaded.push_back(probe_plugin("failing", R"({"error":"libtorch threw: bad alloc"})"));
  plugins.loaded.push_back(probe_plugin("other", R"({"answer":42})"));
  plugins.rejected.push_back({"/opt/plugins/broken.archfit-plugin.yaml", "its ABI is 7"});
  std::vector<std::string> findings;
  const auto probes = read_probes(plugins, devices_named({"12.0"}), findings);
  // Only the probe with facts is reported; one without a torch version is
  // summarised by its name and version, with no arch list to judge.
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_EQ(probes[0].plugin, "other");
  EXPECT_EQ(probes[0].summary, "other 0.1.0");
  EXPECT_TRUE(probes[0].per_device.empty());
  const std::vector<std::string> expected = {
      "plugin /opt/plugins/broken.archfit-plugin.yaml was not loaded: its ABI is 7",
      "plugin garbled: its probe gave text that is not a JSON object",
      "plugin listy: its probe gave text that is not a JSON object",
      "plugin failing: libtorch threw: bad alloc",
  };
  EXPECT_EQ(findings, expected);
}

}  // namespace

namespace {

TEST(CheckProbes, ALibtorchOutsideTheCheckedEnvironmentIsSaidToBeAnother) {
  std::vector<archfit::check::ProbeResult> probes(3);
  probes[0].library = "/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13";
  probes[0].summary = "libtorch 1.13.0";
  probes[1].library = "/venv/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so";
  probes[1].summary = "libtorch 2.7.1";
  probes[2].summary = "other 0.1.0";  // names no library: nothing to say
  archfit::check::note_other_torch(probes, "2.7.1+cu126", {"/venv/lib/python3.12/site-packages/"});
  EXPECT_EQ(probes[0].summary,
            "libtorch 1.13.0; not the environment's torch 2.7.1+cu126, which the scan judges");
  EXPECT_EQ(probes[1].summary, "libtorch 2.7.1");
  EXPECT_EQ(probes[2].summary, "other 0.1.0");
  // A sibling folder whose name starts the same is not inside.
  probes[1].library = "/venv/lib/python3.12/site-packages-old/torch/lib/libtorch_cpu.so";
  archfit::check::note_other_torch(probes, "2.7.1+cu126", {"/venv/lib/python3.12/site-packages"});
  EXPECT_NE(probes[1].summary.find("not the environment's"), std::string::npos);
}

}  // namespace
