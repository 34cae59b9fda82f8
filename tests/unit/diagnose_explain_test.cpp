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
#include "check_resources.hpp"

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
  return request;
}

// What explain runs with: the knowledge base of `kb_dir`, whole.
archfit::check::CheckResources resources_of(const fs::path& kb_dir) {
  return archfit::testing::check_resources("/no-driver-here/libcuda.so.1", kb_dir);
}

fs::path missing_kb() {
  return fs::temp_directory_path() / ("archfit_no_kb_" + std::to_string(::getpid()));
}

archfit::check::CheckRequest gpu_only(const std::string& gpu) {
  archfit::check::CheckRequest request;
  request.gpus = {gpu};
  request.driver = "570.86";
  return request;
}

TEST(DiagnoseExplain, ACheckRunFirstUsesTheKnowledgeBaseExplainLoadedOnce) {
  const std::string text = kNoKernelImage;
  ExplainRequest request = request_for(text);
  request.check = gpu_only("RTX 5090");
  const auto resources = resources_of(ARCHFIT_KB_SOURCE_DIR);
  const auto diagnosis = explain(request, resources);
  EXPECT_EQ(archfit::kb::to_string(diagnosis.category), "no-kernel-image");
  ASSERT_TRUE(diagnosis.environment);
  ASSERT_FALSE(diagnosis.environment->devices.empty());
  EXPECT_NE(diagnosis.environment->devices.front().find("RTX 5090"), std::string::npos)
      << diagnosis.environment->devices.front();
  // The check reads no knowledge base of its own: with resources whose
  // folder is not there, it cannot run.
  EXPECT_THROW(archfit::check::run_check(*request.check, resources_of(missing_kb())),
               archfit::check::CheckError);
}

TEST(DiagnoseExplain, ASavedReportIsNamedInItsErrorsAndOneEnvironmentIsTheMost) {
  const std::string text = kNoKernelImage;
  ExplainRequest request = request_for(text);
  const nlohmann::json not_a_report = {{"schema", "archfit.scan/1"}};
  request.saved_report = &not_a_report;
  request.saved_report_name = "--report saved.json";
  const auto resources = resources_of(ARCHFIT_KB_SOURCE_DIR);
  try {
    explain(request, resources);
    ADD_FAILURE() << "a scan document was taken for a check report";
  } catch (const ExplainError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("--report saved.json: ", 0), 0u) << error.what();
  }
  request.check = gpu_only("RTX 5090");
  EXPECT_THROW(explain(request, resources), ExplainError);  // two environments
}

TEST(DiagnoseExplain, AnUnreadableKnowledgeBaseIsAnExplainErrorAndTextAloneNeedsNoCheck) {
  const std::string text = kNoKernelImage;
  ExplainRequest request = request_for(text);
  try {
    explain(request, resources_of(missing_kb()));
    ADD_FAILURE() << "a missing knowledge base was read";
  } catch (const ExplainError& error) {
    EXPECT_NE(std::string(error.what()).find("the knowledge base could not be read"),
              std::string::npos)
        << error.what();
  }
  const auto alone = explain(request_for(text), resources_of(ARCHFIT_KB_SOURCE_DIR));
  EXPECT_TRUE(alone.recognised());
  EXPECT_FALSE(alone.environment);
}

}  // namespace
