// fleet/: a node's labels for node-feature-discovery and the config of the
// environments it is labelled for. The label rules are Kubernetes' (a name
// part and a value of at most 63 characters, alphanumeric at both ends, '-',
// '_' and '.' between; a DNS-subdomain prefix), which NFD applies to what its
// local source reads; tests/python/test_node_labels.py parses the file the
// command writes with those rules, independently of this code.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fleet/fleet_config.hpp"
#include "fleet/node_labels.hpp"

namespace fs = std::filesystem;
using namespace archfit::fleet;

namespace {

std::string value_of(const std::vector<Label>& labels, const std::string& name) {
  for (const auto& label : labels)
    if (label.name == name) return label.value;
  return "(absent)";
}

archfit::check::DeviceInfo device(const std::string& name, uint32_t major, uint32_t minor) {
  archfit::check::DeviceInfo info;
  info.name = name;
  info.cc = {major, minor};
  return info;
}

class FleetConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("archfit_fleet_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& text) {
    const fs::path file = dir_ / "fleet.yaml";
    std::ofstream(file) << text;
    return file;
  }
  std::string error_of(const std::string& text) {
    try {
      read_fleet_config(write(text));
    } catch (const FleetConfigError& error) {
      return error.what();
    }
    return "(read)";
  }
  fs::path dir_;
};

}  // namespace

TEST(NodeLabelRules, NamesAndValuesFollowKubernetes) {
  EXPECT_EQ(label_name_problem("archfit.dev/sm"), "");
  EXPECT_EQ(label_name_problem("archfit.dev/fits.comfyui-cu124"), "");
  EXPECT_EQ(label_name_problem("plain"), "");
  EXPECT_NE(label_name_problem("archfit.dev/fits.comfy ui"), "");   // a space
  EXPECT_NE(label_name_problem("archfit.dev/fits.trailing-"), "");  // not alphanumeric at the end
  EXPECT_NE(label_name_problem("archfit.dev/" + std::string(64, 'a')), "");  // 64 > 63
  EXPECT_EQ(label_name_problem("archfit.dev/" + std::string(63, 'a')), "");
  EXPECT_NE(label_name_problem("Archfit.dev/sm"), "");  // a prefix is lowercase
  EXPECT_NE(label_name_problem("archfit..dev/sm"), "");
  EXPECT_EQ(label_value_problem(""), "");
  EXPECT_EQ(label_value_problem("570.86.16"), "");
  EXPECT_NE(label_value_problem(std::string(64, '1')), "");
  EXPECT_NE(label_value_problem("12.8 "), "");
}

TEST(NodeLabels, OneArchIsNamedAndEveryArchIsFlaggedWithTheDriverAndEachEnvironment) {
  archfit::check::CheckReport node;
  node.devices = {device("NVIDIA GeForce RTX 5090", 12, 0),
                  device("NVIDIA GeForce RTX 5090", 12, 0)};
  node.driver.version = "570.86.16";
  node.driver.cuda_version = "12.8";
  const auto labels = node_labels(
      node, {{"comfyui", archfit::check::OverallVerdict::fails, "fails: xformers has no sm_120"},
             {"flux", archfit::check::OverallVerdict::fits, "fits"},
             {"broken", archfit::check::OverallVerdict::unknown, "no such venv"}});
  EXPECT_EQ(value_of(labels, "archfit.dev/gpus"), "2");
  EXPECT_EQ(value_of(labels, "archfit.dev/sm"), "120");
  EXPECT_EQ(value_of(labels, "archfit.dev/sm.120"), "true");
  EXPECT_EQ(value_of(labels, "archfit.dev/driver"), "570.86.16");
  EXPECT_EQ(value_of(labels, "archfit.dev/driver.major"), "570");
  EXPECT_EQ(value_of(labels, "archfit.dev/cuda"), "12.8");
  EXPECT_EQ(value_of(labels, "archfit.dev/fits.comfyui"), "false");
  EXPECT_EQ(value_of(labels, "archfit.dev/fits.flux"), "true");
  EXPECT_EQ(value_of(labels, "archfit.dev/fits.broken"), "(absent)");
  for (const auto& label : labels) {
    if (label.name.empty()) continue;
    EXPECT_EQ(label_name_problem(label.name), "") << label.name;
    EXPECT_EQ(label_value_problem(label.value), "") << label.name << "=" << label.value;
  }
}

TEST(NodeLabels, AMixedNodeIsFoundByEachOfItsArchs) {
  archfit::check::CheckReport node;
  node.devices = {device("NVIDIA GeForce RTX 4090", 8, 9), device("NVIDIA H100", 9, 0)};
  const auto labels = node_labels(node, {});
  EXPECT_EQ(value_of(labels, "archfit.dev/sm"), "mixed");
  EXPECT_EQ(value_of(labels, "archfit.dev/sm.89"), "true");
  EXPECT_EQ(value_of(labels, "archfit.dev/sm.90"), "true");
  EXPECT_EQ(value_of(labels, "archfit.dev/driver"), "(absent)");  // none known, none said
}

TEST(NodeLabels, TheFileHasOneFeaturePerLineItsExpiryAndCommentsThatStayComments) {
  archfit::check::CheckReport node;
  node.no_gpu = "no NVIDIA driver is installed here";
  const auto expires = std::chrono::system_clock::from_time_t(1796380800);  // 2026-12-04T10:40:00Z
  const std::string file = nfd_feature_file(
      node_labels(node, {{"x", archfit::check::OverallVerdict::fails, "two\nlines"}}), "heading",
      expires);
  EXPECT_EQ(file.rfind("# heading\n# +expiry-time=2026-12-04T10:40:00Z\n", 0), 0u) << file;
  EXPECT_NE(file.find("# no GPU: no NVIDIA driver is installed here\narchfit.dev/gpus=0\n"),
            std::string::npos)
      << file;
  EXPECT_NE(file.find("# x: two lines\narchfit.dev/fits.x=false\n"), std::string::npos) << file;
  EXPECT_EQ(file.find("archfit.dev/sm"), std::string::npos) << file;
}

TEST_F(FleetConfigTest, EnvironmentsAreReadWithPathsFromTheFilesFolder) {
  // Absolute paths as this platform writes them ("C:\\images\\…" on Windows,
  // where "/images/…" would be relative to the drive).
  const fs::path root = dir_.root_path();
  const std::string site = (root / "images" / "flux" / "site-packages").string();
  const std::string wheel = (root / "wheels" / "torch.whl").string();
  const auto config =
      read_fleet_config(write("schema: archfit.fleet/1\n"
                              "environments:\n"
                              "  - name: comfyui-cu124\n"
                              "    venv: envs/comfyui\n"
                              "  - name: flux\n"
                              "    site_packages: [" +
                              site +
                              ", more/site-packages]\n"
                              "    wheels: " +
                              wheel + "\n"));
  ASSERT_EQ(config.environments.size(), 2u);
  EXPECT_EQ(config.environments[0].name, "comfyui-cu124");
  EXPECT_EQ(config.environments[0].venvs,
            std::vector<std::string>{(dir_ / "envs/comfyui").lexically_normal().string()});
  EXPECT_EQ(
      config.environments[1].site_packages,
      (std::vector<std::string>{site, (dir_ / "more/site-packages").lexically_normal().string()}));
  EXPECT_EQ(config.environments[1].wheels, std::vector<std::string>{wheel});
}

TEST_F(FleetConfigTest, WhatCannotBeUsedIsRefusedNamingTheLineAndField) {
  const std::string head = "schema: archfit.fleet/1\nenvironments:\n";
  EXPECT_NE(error_of(head + "  - name: comfy ui\n    venv: /v\n")
                .find(":3: environments[0].name: \"comfy ui\" cannot name the label "
                      "archfit.dev/fits.comfy ui"),
            std::string::npos)
      << error_of(head + "  - name: comfy ui\n    venv: /v\n");
  EXPECT_NE(
      error_of(head + "  - name: " + std::string(60, 'a') + "\n    venv: /v\n").find("at most 63"),
      std::string::npos);
  EXPECT_NE(error_of(head + "  - name: a\n    venv: /v\n  - name: a\n    venv: /w\n")
                .find("\"a\" is named twice"),
            std::string::npos);
  EXPECT_NE(
      error_of(head + "  - name: a\n    venvs: /v\n").find("environments[0].venvs: unknown field"),
      std::string::npos);
  EXPECT_NE(error_of(head + "  - name: a\n").find("names no environment"), std::string::npos);
  EXPECT_NE(error_of("schema: archfit.kb.gpus/1\nenvironments: []\n").find("archfit.fleet/1"),
            std::string::npos);
  EXPECT_NE(error_of(head).find("at least one environment"), std::string::npos);
  EXPECT_NE(error_of("schema: [\n").find("YAML syntax"), std::string::npos);
  EXPECT_NE(error_of(head + "  - name: a\n    venv: /v\nextra: 1\n").find("extra: unknown field"),
            std::string::npos);
  try {
    read_fleet_config(dir_ / "missing.yaml");
    ADD_FAILURE() << "a missing file was read";
  } catch (const FleetConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("missing.yaml: cannot read the file"),
              std::string::npos);
  }
}
