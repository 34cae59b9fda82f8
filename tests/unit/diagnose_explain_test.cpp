// diagnose/explain: the one explain flow behind `archfit explain` and
// archfit_diagnose_run (issue 25) — the knowledge base loaded once and
// handed to the check it runs, the environment from exactly one source, and
// bad input refused by name.
#include "diagnose/explain.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "check/check.hpp"

namespace fs = std::filesystem;
using archfit::diagnose::explain;
using archfit::diagnose::ExplainError;
using archfit::diagnose::ExplainRequest;

namespace {

constexpr const char* kNoKernelImage =
    "CUDA error: no kernel image is available for execution on the device";

ExplainRequest request_for(const std::string& text) {
  ExplainRequest request;
  request.text = text;
  request.kb_dir = fs::path(ARCHFIT_KB_SOURCE_DIR);
  return request;
}

archfit::check::CheckOptions gpu_only(const std::string& gpu) {
  archfit::check::CheckOptions options;
  options.gpus = {gpu};
  options.driver = "570.86";
  // The check must take explain's knowledge base: one it would load itself
  // from here does not exist.
  options.kb_dir = fs::temp_directory_path() / ("archfit_no_kb_" + std::to_string(::getpid()));
  return options;
}

TEST(DiagnoseExplain, ACheckRunFirstUsesTheKnowledgeBaseExplainLoadedOnce) {
  const std::string text = kNoKernelImage;
  ExplainRequest request = request_for(text);
  request.check = gpu_only("RTX 5090");
  const auto diagnosis = explain(request);
  EXPECT_EQ(diagnosis.category, "no-kernel-image");
  ASSERT_TRUE(diagnosis.environment);
  ASSERT_FALSE(diagnosis.environment->devices.empty());
  EXPECT_NE(diagnosis.environment->devices.front().find("RTX 5090"), std::string::npos)
      << diagnosis.environment->devices.front();
  // The same check on its own reads kb_dir, which is not there.
  EXPECT_THROW(archfit::check::run_check(*request.check), archfit::check::CheckError);
}

TEST(DiagnoseExplain, ASavedReportIsNamedInItsErrorsAndOneEnvironmentIsTheMost) {
  const std::string text = kNoKernelImage;
  ExplainRequest request = request_for(text);
  const nlohmann::json not_a_report = {{"schema", "archfit.scan/1"}};
  request.saved_report = &not_a_report;
  request.saved_report_name = "--report saved.json";
  try {
    explain(request);
    ADD_FAILURE() << "a scan document was taken for a check report";
  } catch (const ExplainError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("--report saved.json: ", 0), 0u) << error.what();
  }
  request.check = gpu_only("RTX 5090");
  EXPECT_THROW(explain(request), ExplainError);  // two environments
}

TEST(DiagnoseExplain, AnUnreadableKnowledgeBaseIsAnExplainErrorAndTextAloneNeedsNoCheck) {
  const std::string text = kNoKernelImage;
  ExplainRequest request = request_for(text);
  request.kb_dir = fs::temp_directory_path() / ("archfit_no_kb_" + std::to_string(::getpid()));
  try {
    explain(request);
    ADD_FAILURE() << "a missing knowledge base was read";
  } catch (const ExplainError& error) {
    EXPECT_NE(std::string(error.what()).find("the knowledge base could not be read"),
              std::string::npos)
        << error.what();
  }
  const auto alone = explain(request_for(text));
  EXPECT_TRUE(alone.recognised());
  EXPECT_FALSE(alone.environment);
}

}  // namespace
