// archfit_check_run through the C ABI, on the demo environment
// (tests/fixtures/make_demo_env.cmake): torch with SASS sm_75-sm_90 and no
// PTX, fastops with compute_90 PTX only.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "archfit/archfit.h"
#include "archfit/archfit.hpp"

namespace {

class CheckApi : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(std::filesystem::path(ARCHFIT_DEMO_SITE) / "torch" /
                                 "version.py")) {
      GTEST_SKIP() << "the demo environment was not built (nvcc missing?) in " << ARCHFIT_DEMO_SITE;
    }
    ASSERT_EQ(archfit_context_create(nullptr, &context_), ARCHFIT_OK) << archfit_last_error();
    options_.struct_size = sizeof options_;
    options_.site_packages = sites_;
    options_.site_packages_count = 1;
  }
  void TearDown() override { archfit_context_destroy(context_); }

  archfit_context* context_ = nullptr;
  const char* sites_[1] = {ARCHFIT_DEMO_SITE};
  archfit_check_options options_{};
};

}  // namespace

TEST_F(CheckApi, FailingEnvironmentIsASuccessfulCallWhoseReportFails) {
  options_.gpu = "RTX 5090";
  archfit_report* report = nullptr;
  ASSERT_EQ(archfit_check_run(context_, &options_, &report), ARCHFIT_OK) << archfit_last_error();
  EXPECT_EQ(archfit_report_verdict(report), ARCHFIT_FAILS);
  ASSERT_EQ(archfit_report_component_count(report), 2u);
  EXPECT_STREQ(archfit_report_component_name(report, 0), "torch");  // worst first
  EXPECT_STREQ(archfit_report_component_verdict(report, 0), "no-image");
  // No driver named: the newest build for sm_120 (PyPI's 2.15.0, cu132).
  EXPECT_NE(std::string(archfit_report_component_fix(report, 0)).find("torch 2.15.0+cu132"),
            std::string::npos)
      << archfit_report_component_fix(report, 0);
  EXPECT_STREQ(archfit_report_component_verdict(report, 1), "ptx-jit");
  EXPECT_EQ(archfit_report_component_name(report, 2), nullptr);
  const char* json = nullptr;
  ASSERT_EQ(archfit_report_json(report, &json), ARCHFIT_OK);
  const auto doc = nlohmann::json::parse(json);
  EXPECT_EQ(doc["schema"], "archfit.check/1");
  EXPECT_EQ(doc["components"][0]["fix"]["commands"][0], "pip install torch==2.15.0");
  // The stack and the one-line answer carry the same fix.
  EXPECT_EQ(doc["stacks"][0]["name"], "PyTorch");
  EXPECT_EQ(doc["stacks"][0]["blocks"], true);
  EXPECT_EQ(doc["fix"]["commands"][0], "pip install torch==2.15.0");
  EXPECT_NE(doc["summary"].get<std::string>().find("run: pip install torch==2.15.0"),
            std::string::npos)
      << doc["summary"];
  // A C caller reads the same answer without JSON.
  EXPECT_EQ(doc["summary"], archfit_report_summary(report));
  ASSERT_EQ(archfit_report_stack_count(report), 2u);
  EXPECT_STREQ(archfit_report_stack_name(report, 0), "PyTorch");
  EXPECT_STREQ(archfit_report_stack_verdict(report, 0), "no-image");
  EXPECT_EQ(archfit_report_stack_blocks(report, 0), 1);
  EXPECT_EQ(archfit_report_stack_blocks(report, 1), 0);  // fastops: its PTX JIT-compiles
  EXPECT_EQ(archfit_report_stack_blocks(report, 2), -1);
  EXPECT_STREQ(archfit_report_stack_fix_command(report, 0, 0), "pip install torch==2.15.0");
  EXPECT_EQ(archfit_report_stack_fix_command(report, 0, 1), nullptr);
  EXPECT_EQ(archfit_report_stack_name(report, 2), nullptr);
  EXPECT_EQ(archfit_report_component_blocks(report, 0), 1);
  EXPECT_EQ(archfit_report_component_blocks(report, 1), 0);
  EXPECT_EQ(archfit_report_component_blocks(report, 2), -1);
  EXPECT_STREQ(archfit_report_summary(nullptr), "");
  archfit_report_destroy(report);
}

// The verdict table through the C ABI is the one the JSON carries: a C
// caller and a JSON reader answer "does it fail" alike, for every verdict.
TEST_F(CheckApi, TheVerdictTableMatchesTheDocumentsAndRefusesUnknownNames) {
  options_.gpu = "RTX 5090";
  archfit_report* report = nullptr;
  ASSERT_EQ(archfit_check_run(context_, &options_, &report), ARCHFIT_OK) << archfit_last_error();
  const char* json = nullptr;
  ASSERT_EQ(archfit_report_json(report, &json), ARCHFIT_OK);
  const auto table = nlohmann::json::parse(json)["verdicts"];
  archfit_report_destroy(report);
  ASSERT_EQ(archfit_verdict_count(), table.size());
  std::size_t blocking = 0;
  for (std::size_t i = 0; i < archfit_verdict_count(); ++i) {
    const char* name = archfit_verdict_name(i);
    ASSERT_NE(name, nullptr) << i;
    ASSERT_TRUE(table.contains(name)) << name;
    EXPECT_EQ(archfit_verdict_blocks(name), table[name]["blocks"].get<bool>() ? 1 : 0) << name;
    EXPECT_EQ(archfit_verdict_warns(name), table[name]["warns"].get<bool>() ? 1 : 0) << name;
    blocking += archfit_verdict_blocks(name) == 1;
  }
  // no-image, ptx-too-new-for-driver, driver-too-old, no-cuda-build,
  // missing-library, wrong-platform
  EXPECT_EQ(blocking, 6u);
  EXPECT_EQ(archfit_verdict_blocks("no-image"), 1);
  EXPECT_EQ(archfit_verdict_warns("ptx-jit"), 1);
  EXPECT_EQ(archfit_verdict_blocks("relocatable-only"), 0);
  EXPECT_EQ(archfit_verdict_name(archfit_verdict_count()), nullptr);
  EXPECT_EQ(archfit_verdict_blocks("no_image"), -1);
  EXPECT_EQ(archfit_verdict_blocks(nullptr), -1);
  EXPECT_EQ(archfit_verdict_warns(""), -1);
}

TEST_F(CheckApi, FittingEnvironment) {
  options_.gpu = "H100";
  archfit_report* report = nullptr;
  ASSERT_EQ(archfit_check_run(context_, &options_, &report), ARCHFIT_OK) << archfit_last_error();
  EXPECT_EQ(archfit_report_verdict(report), ARCHFIT_FITS);
  archfit_report_destroy(report);
}

TEST_F(CheckApi, UnknownGpuIsAnInvalidArgumentListingCloseNamesAndLeavesTheOutParameter) {
  options_.gpu = "RTX 5909";
  archfit_report* report = reinterpret_cast<archfit_report*>(0x1);
  EXPECT_EQ(archfit_check_run(context_, &options_, &report), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(report, reinterpret_cast<archfit_report*>(0x1));
  EXPECT_NE(std::string(archfit_last_error()).find("GeForce RTX 5090"), std::string::npos)
      << archfit_last_error();
}

TEST_F(CheckApi, NullListEntriesAreRejectedByName) {
  const char* broken[2] = {ARCHFIT_DEMO_SITE, nullptr};
  options_.site_packages = broken;
  options_.site_packages_count = 2;
  archfit_report* report = nullptr;
  EXPECT_EQ(archfit_check_run(context_, &options_, &report), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(archfit_last_error()).find("site_packages[1] is NULL"), std::string::npos);
  EXPECT_EQ(archfit_check_run(context_, nullptr, &report), ARCHFIT_ERROR_INVALID_ARGUMENT);
  archfit_report_destroy(nullptr);
  EXPECT_EQ(archfit_report_verdict(nullptr), ARCHFIT_UNKNOWN);
}

TEST_F(CheckApi, WheelsAreReadOnlyWhenTheCallersStructHasThem) {
  options_.gpu = "H100";
  const char* wheels[1] = {"/nonexistent/torch-2.5.1-cp311-cp311-linux_x86_64.whl"};
  options_.wheels = wheels;
  options_.wheels_count = 1;
  archfit_report* report = nullptr;
  EXPECT_EQ(archfit_check_run(context_, &options_, &report), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(archfit_last_error()).find("no wheel file at /nonexistent/torch-2.5.1"),
            std::string::npos)
      << archfit_last_error();
  // A caller built against the header before `wheels` existed: not read.
  options_.struct_size = offsetof(archfit_check_options, wheels);
  ASSERT_EQ(archfit_check_run(context_, &options_, &report), ARCHFIT_OK) << archfit_last_error();
  EXPECT_EQ(archfit_report_verdict(report), ARCHFIT_FITS);
  archfit_report_destroy(report);
}

// A host that checks before every run (ComfyUI's Pre-flight) asks for the
// scan index: the second check reads no library. A caller built before the
// field existed passes a struct_size that stops short of it: no index.
TEST_F(CheckApi, TheScanIndexIsKeptOnlyWhenAskedFor) {
  const std::filesystem::path cache =
      std::filesystem::temp_directory_path() / ("archfit_capi_index_" + std::to_string(::getpid()));
  std::filesystem::remove_all(cache);
  ::setenv("ARCHFIT_CACHE_DIR", cache.c_str(), 1);
  options_.gpu = "RTX 5090";
  const auto scan_of = [&] {
    archfit_report* report = nullptr;
    EXPECT_EQ(archfit_check_run(context_, &options_, &report), ARCHFIT_OK) << archfit_last_error();
    const char* json = nullptr;
    EXPECT_EQ(archfit_report_json(report, &json), ARCHFIT_OK);
    auto scan = nlohmann::json::parse(json)["scan"];
    archfit_report_destroy(report);
    return scan;
  };
  options_.scan_index = 1;
  options_.struct_size = offsetof(archfit_check_options, scan_index);
  EXPECT_EQ(scan_of()["reused"], 0);
  EXPECT_FALSE(std::filesystem::exists(cache / "scan-index"));
  options_.struct_size = sizeof options_;
  const auto first = scan_of();
  EXPECT_EQ(first["reused"], 0) << first;
  EXPECT_TRUE(std::filesystem::exists(cache / "scan-index"));
  const auto second = scan_of();
  EXPECT_GT(second["files"].get<int>(), 0);
  EXPECT_EQ(second["reused"], second["files"]) << second;
  ::unsetenv("ARCHFIT_CACHE_DIR");
  std::filesystem::remove_all(cache);
}

// archfit.hpp owns a report, a diagnosis and a plugin set as it owns a scan
// (issue 25): what the C accessors answer, through move-only owners.
TEST_F(CheckApi, TheCppWrapperOwnsReportsDiagnosesAndPluginSets) {
  const archfit::Context context;
  options_.gpu = "RTX 5090";
  archfit::Report report = context.check(options_);
  EXPECT_EQ(report.verdict(), ARCHFIT_FAILS);
  ASSERT_EQ(report.stack_count(), 2u);
  EXPECT_EQ(report.stack_name(0), "PyTorch");
  EXPECT_TRUE(report.stack_blocks(0));
  EXPECT_FALSE(report.stack_blocks(1));
  EXPECT_EQ(report.stack_fix_command(0, 0), "pip install torch==2.15.0");
  EXPECT_TRUE(report.stack_fix_command(0, 1).empty());
  EXPECT_EQ(report.component_name(0), "torch");
  EXPECT_TRUE(report.component_name(9).empty());
  EXPECT_EQ(nlohmann::json::parse(report.json())["summary"], std::string(report.summary()));
  const archfit::Report moved = std::move(report);
  EXPECT_EQ(moved.verdict(), ARCHFIT_FAILS);

  const std::string error = "CUDA error: no kernel image is available for execution on the device";
  archfit_diagnose_options diagnose{};
  diagnose.struct_size = sizeof diagnose;
  diagnose.text = error.data();
  diagnose.text_size = error.size();
  diagnose.report = moved.get();
  const archfit::Diagnosis diagnosis = context.diagnose(diagnose);
  const archfit_diagnosis_info info = diagnosis.info();
  EXPECT_TRUE(info.recognised);
  EXPECT_STREQ(info.category, "no-kernel-image");
  EXPECT_FALSE(diagnosis.fix(0).empty());
  EXPECT_TRUE(diagnosis.fix(info.fix_count).empty());
  EXPECT_EQ(nlohmann::json::parse(diagnosis.json())["category"], "no-kernel-image");

  archfit_plugin_search nowhere{};
  nowhere.struct_size = sizeof nowhere;
  nowhere.skip_environment = 1;
  nowhere.skip_install_dir = 1;
  const archfit::PluginSet plugins = context.plugins(&nowhere);
  EXPECT_EQ(plugins.count(), 0u);
  EXPECT_EQ(plugins.rejected_count(), 0u);
  EXPECT_TRUE(plugins.rejected_path(0).empty());
  EXPECT_THROW(context.module(plugins, "imagegen_ops.rmsnorm"), archfit::Error);

  options_.gpu = "RTX 5909";
  try {
    (void)context.check(options_);
    ADD_FAILURE() << "an unknown GPU name was accepted";
  } catch (const archfit::Error& failure) {
    EXPECT_EQ(failure.status(), ARCHFIT_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(failure.what()).find("GeForce RTX 5090"), std::string::npos)
        << failure.what();
  }
}
