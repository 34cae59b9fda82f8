// archfit_diagnose_run through the C ABI: text alone, and weighed against
// the demo environment (tests/fixtures/make_demo_env.cmake: torch
// 2.5.1+cu124 with SASS up to sm_90 and no PTX) given as a finished report,
// as saved JSON, or as a check to run first.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "archfit/archfit.h"

namespace {

const std::string kNoKernelImage =
    "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the "
    "device";

class DiagnoseApi : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(archfit_context_create(nullptr, &context_), ARCHFIT_OK) << archfit_last_error();
    options_.struct_size = sizeof options_;
    set_text(kNoKernelImage);
    check_.struct_size = sizeof check_;
    check_.gpu = "RTX 5090";
    check_.driver = "575.51";
    check_.site_packages = sites_;
    check_.site_packages_count = 1;
  }
  void TearDown() override {
    archfit_diagnosis_destroy(diagnosis_);
    archfit_context_destroy(context_);
  }
  void set_text(const std::string& text) {
    text_ = text;
    options_.text = text_.data();
    options_.text_size = text_.size();
  }
  bool demo_built() const {
    return std::filesystem::exists(std::filesystem::path(ARCHFIT_DEMO_SITE) / "torch");
  }
  archfit_diagnosis_info info() {
    archfit_diagnosis_info out{};
    out.struct_size = sizeof out;
    EXPECT_EQ(archfit_diagnosis_get_info(diagnosis_, &out), ARCHFIT_OK) << archfit_last_error();
    return out;
  }
  // Runs the diagnosis; the evidence the environment gives, first sentence.
  std::string weighed() {
    EXPECT_EQ(archfit_diagnose_run(context_, &options_, &diagnosis_), ARCHFIT_OK)
        << archfit_last_error();
    const char* first = archfit_diagnosis_evidence(diagnosis_, 0);
    return first ? first : "";
  }

  archfit_context* context_ = nullptr;
  archfit_diagnosis* diagnosis_ = nullptr;
  archfit_diagnose_options options_{};
  archfit_check_options check_{};
  const char* sites_[1] = {ARCHFIT_DEMO_SITE};
  std::string text_;
};

constexpr const char* kTorchConfirmed =
    "torch 2.5.1+cu124 has SASS up to sm_90 and no PTX; your GPU is sm_120";

}  // namespace

TEST_F(DiagnoseApi, TextAloneGivesTheCategoryTheComponentAndTheFix) {
  set_text(
      "Traceback (most recent call last):\n"
      "  File \"/nowhere/site-packages/xformers/ops/fmha/cutlass.py\", line 9, in fwd\n"
      "    return op(q, k, v)\n"
      "RuntimeError: CUDA error: no kernel image is available for execution on the device\n");
  ASSERT_EQ(archfit_diagnose_run(context_, &options_, &diagnosis_), ARCHFIT_OK)
      << archfit_last_error();
  const archfit_diagnosis_info i = info();
  EXPECT_EQ(i.recognised, 1);
  EXPECT_STREQ(i.category, "no-kernel-image");
  EXPECT_STREQ(i.confidence, "high");
  EXPECT_STREQ(i.component_name, "xformers");
  EXPECT_STREQ(i.component_kind, "distribution");
  EXPECT_STREQ(i.component_version, "");  // nothing of it on this machine
  EXPECT_STREQ(i.component_path, "/nowhere/site-packages/xformers/ops/fmha/cutlass.py");
  EXPECT_EQ(i.environment, nullptr);
  EXPECT_EQ(i.evidence_count, 0u);
  ASSERT_GT(i.fix_count, 0u);
  EXPECT_NE(archfit_diagnosis_fix(diagnosis_, 0), nullptr);
  EXPECT_EQ(archfit_diagnosis_fix(diagnosis_, i.fix_count), nullptr);
  EXPECT_EQ(archfit_diagnosis_evidence(diagnosis_, 0), nullptr);
  const char* json = nullptr;
  ASSERT_EQ(archfit_diagnosis_json(diagnosis_, &json), ARCHFIT_OK);
  const auto document = nlohmann::json::parse(json);
  EXPECT_EQ(document["schema"], "archfit.diagnosis/1");
  EXPECT_EQ(document["fix"].size(), i.fix_count);
}

TEST_F(DiagnoseApi, AnyBytesAreDiagnosedAndTheJsonStaysUtf8) {
  set_text(std::string("caf\xe9 \0 log\n", 11) + "RuntimeError: CUDA error: out of memory \xff\n");
  ASSERT_EQ(archfit_diagnose_run(context_, &options_, &diagnosis_), ARCHFIT_OK)
      << archfit_last_error();
  EXPECT_STREQ(info().category, "out-of-memory");
  const char* json = nullptr;
  ASSERT_EQ(archfit_diagnosis_json(diagnosis_, &json), ARCHFIT_OK);
  EXPECT_TRUE(nlohmann::json::accept(json));
}

TEST_F(DiagnoseApi, ACudaErrorNumberAloneIsRecognised) {
  set_text("the op failed");
  options_.cuda_error = 209;
  ASSERT_EQ(archfit_diagnose_run(context_, &options_, &diagnosis_), ARCHFIT_OK);
  EXPECT_STREQ(info().category, "no-kernel-image");
  EXPECT_STREQ(info().confidence, "medium");
}

TEST_F(DiagnoseApi, AFinishedCheckConfirmsTheCauseInWords) {
  if (!demo_built()) GTEST_SKIP() << "the demo environment needs nvcc: " << ARCHFIT_DEMO_SITE;
  archfit_report* report = nullptr;
  ASSERT_EQ(archfit_check_run(context_, &check_, &report), ARCHFIT_OK) << archfit_last_error();
  options_.report = report;
  EXPECT_EQ(weighed().rfind(kTorchConfirmed, 0), 0u);
  archfit_report_destroy(report);  // the diagnosis keeps nothing of it
  const archfit_diagnosis_info i = info();
  EXPECT_STREQ(i.environment, "confirms");
  EXPECT_STREQ(i.component_name, "torch");
  EXPECT_STREQ(i.component_version, "2.5.1+cu124");
  EXPECT_STREQ(i.sm, "sm_120");
  EXPECT_EQ(i.evidence_count, 1u);
  // The diagnosis names the finished check as this call always has.
  const char* json = nullptr;
  ASSERT_EQ(archfit_diagnosis_json(diagnosis_, &json), ARCHFIT_OK);
  EXPECT_EQ(nlohmann::json::parse(json)["environment"]["source"], "archfit_check_run") << json;
  // The newest build for sm_120 that driver 575.51 runs: CUDA 12, not 13.
  EXPECT_EQ(std::string(archfit_diagnosis_fix(diagnosis_, 0))
                .rfind("torch: Install torch 2.11.0+cu128", 0),
            0u)
      << archfit_diagnosis_fix(diagnosis_, 0);
}

TEST_F(DiagnoseApi, ASavedCheckDocumentAndACheckRunFirstWeighTheSame) {
  if (!demo_built()) GTEST_SKIP() << "the demo environment needs nvcc: " << ARCHFIT_DEMO_SITE;
  archfit_report* report = nullptr;
  ASSERT_EQ(archfit_check_run(context_, &check_, &report), ARCHFIT_OK) << archfit_last_error();
  const char* saved = nullptr;
  ASSERT_EQ(archfit_report_json(report, &saved), ARCHFIT_OK);
  const std::string document = saved;
  archfit_report_destroy(report);
  options_.report_json = document.c_str();
  EXPECT_EQ(weighed().rfind(kTorchConfirmed, 0), 0u);
  archfit_diagnosis_destroy(diagnosis_);
  diagnosis_ = nullptr;
  options_.report_json = nullptr;
  options_.check = &check_;
  EXPECT_EQ(weighed().rfind(kTorchConfirmed, 0), 0u);
}

TEST_F(DiagnoseApi, ACheckOfAGpuAloneGivesTheArch) {
  check_.site_packages_count = 0;
  options_.check = &check_;
  weighed();
  EXPECT_STREQ(info().sm, "sm_120");
  EXPECT_STREQ(info().environment, "inconclusive");
}

TEST_F(DiagnoseApi, MalformedCallsAreInvalidArgumentsNamingWhatIsWrongAndLeaveTheOutParameter) {
  auto* const untouched = reinterpret_cast<archfit_diagnosis*>(0x1);
  const auto refused = [&](const char* words) {
    archfit_diagnosis* out = untouched;
    EXPECT_EQ(archfit_diagnose_run(context_, &options_, &out), ARCHFIT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(out, untouched);
    EXPECT_NE(std::string(archfit_last_error()).find(words), std::string::npos)
        << archfit_last_error();
  };
  options_.text = nullptr;
  refused("text is NULL but its size is");
  set_text(kNoKernelImage);
  options_.report_json = "{\"schema\": \"archfit.scan/1\"}";
  refused("archfit.check/1");
  options_.report_json = "not json";
  refused("report_json is not JSON");
  options_.check = &check_;
  refused("at most one of report, report_json and check");
  options_.report_json = nullptr;
  check_.gpu = "RTX 5909";
  refused("GeForce RTX 5090");  // the closest names
  options_.check = nullptr;
  options_.kb_dir = "/no/such/kb";
  refused("knowledge base");
  options_.kb_dir = nullptr;
  ASSERT_EQ(archfit_diagnose_run(context_, &options_, &diagnosis_), ARCHFIT_OK);
  archfit_diagnosis_info small{};
  small.struct_size = 8;
  EXPECT_EQ(archfit_diagnosis_get_info(diagnosis_, &small), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(archfit_last_error()).find("struct_size"), std::string::npos);
  EXPECT_EQ(archfit_diagnosis_fix(nullptr, 0), nullptr);
  archfit_diagnosis_destroy(nullptr);
}
