// `archfit explain` as a user runs it: text, a log file, stdin; weighed
// against an environment (check's options, or a saved check); its exit codes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_archfit.hpp"

namespace fs = std::filesystem;

namespace {

CommandResult run(std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), "explain");
  return run_archfit(arguments);
}

const std::string kCorpus = std::string(ARCHFIT_TEST_DATA_DIR) + "/errors/";

}  // namespace

TEST(CliExplain, ARecognisedMessageExitsZeroWithTheFix) {
  const auto result =
      run({"RuntimeError: CUDA error: no kernel image is available for execution on the device"});
  EXPECT_EQ(result.exit_code, 0) << result.out;
  EXPECT_NE(result.out.find("no-kernel-image (high confidence)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("fix        1. "), std::string::npos) << result.out;
}

TEST(CliExplain, ALogFileGivesItsLastErrorAsJson) {
  const auto result = run({"--json", "--file", kCorpus + "invokeai_driver_insufficient.txt"});
  EXPECT_EQ(result.exit_code, 0) << result.out;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["schema"], "archfit.diagnosis/1");
  EXPECT_EQ(json["category"], "driver-too-old");
}

// The command's stdin is empty (sys::run_program gives it /dev/null, NUL on Windows).
TEST(CliExplain, StdinIsReadAndAnUnknownErrorExitsOne) {
  const auto result = run({});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_NE(result.out.find("not recognised"), std::string::npos) << result.out;
  EXPECT_EQ(run({"KeyError: 'model'"}).exit_code, 1);
}

TEST(CliExplain, AMissingFileExitsTwoNamingIt) {
  const auto result = run({"--file", "/no/such/comfyui.log"});
  EXPECT_EQ(result.exit_code, 2) << result.out;
  EXPECT_NE(result.out.find("/no/such/comfyui.log"), std::string::npos) << result.out;
}

namespace {

// The demo site-packages (tests/fixtures/make_demo_env.cmake): torch
// 2.5.1+cu124 whose library has SASS up to sm_90 and no PTX.
const std::string kDemoSite = ARCHFIT_DEMO_SITE;
const std::string kTorchError =
    "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the "
    "device";

bool demo_site_built() { return fs::exists(fs::path(kDemoSite) / "torch"); }

}  // namespace

TEST(CliExplain, CheckOptionsWeighTheErrorAgainstTheEnvironment) {
  if (!demo_site_built()) GTEST_SKIP() << "the demo environment needs nvcc: " << kDemoSite;
  const auto result =
      run({kTorchError, "--gpu", "RTX 5090", "--no-progress", "--site-packages", kDemoSite});
  EXPECT_EQ(result.exit_code, 0) << result.out;
  EXPECT_NE(result.out.find("component  torch 2.5.1+cu124 (distribution)"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("checked    confirms (archfit check): torch 2.5.1+cu124 has SASS up "
                            "to sm_90 and no PTX; your GPU is sm_120"),
            std::string::npos)
      << result.out;
  // The check's exact fix for torch leads; the knowledge base's general
  // PyTorch step, and its "run archfit check", are not repeated.
  EXPECT_NE(result.out.find("fix        1. torch: Install torch 2.15.0+cu132"), std::string::npos)
      << result.out;
  EXPECT_EQ(result.out.find("For PyTorch on an RTX 50-series"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("Run `archfit check`"), std::string::npos) << result.out;
  // Each option takes one value: the error text may come after them.
  const auto text_last =
      run({"--gpu", "RTX 5090", "--no-progress", "--site-packages", kDemoSite, kTorchError});
  EXPECT_EQ(text_last.exit_code, 0) << text_last.out;
  EXPECT_EQ(text_last.out, result.out);
}

TEST(CliExplain, ASavedCheckReportIsWeighedTheSameWay) {
  if (!demo_site_built()) GTEST_SKIP() << "the demo environment needs nvcc: " << kDemoSite;
  const fs::path report = scratch_folder("archfit_explain_report_" + std::to_string(::getpid())) +=
      ".json";
  const auto check = run_archfit_apart(
      {"check", "--json", "--no-progress", "--gpu", "RTX 5090", "--site-packages", kDemoSite});
  ASSERT_EQ(check.exit_code, 1) << check.out << check.err;  // the check finds torch failing
  std::ofstream(report, std::ios::binary) << check.out;
  const auto result = run({kTorchError, "--json", "--report", arg(report)});
  fs::remove(report);
  EXPECT_EQ(result.exit_code, 0) << result.out;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["environment"]["verdict"], "confirms");
  EXPECT_EQ(json["environment"]["source"], arg(report));
  EXPECT_EQ(json["component"]["version"], "2.5.1+cu124");
  EXPECT_EQ(json["sm"], "sm_120");
}

TEST(CliExplain, AGpuAloneNamesTheArchWithoutScanningAnything) {
  const auto result = run({kTorchError, "--json", "--gpu", "sm_120", "--driver", "575.51"});
  EXPECT_EQ(result.exit_code, 0) << result.out;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["sm"], "sm_120");
  EXPECT_EQ(json["environment"]["verdict"], "inconclusive");
  EXPECT_NE(json["explanation"].get<std::string>().find("sm_120"), std::string::npos);
}

TEST(CliExplain, ABadReportExitsTwoNamingTheFileAndWhatIsWrong) {
  const fs::path report = scratch_folder("archfit_explain_bad_" + std::to_string(::getpid())) +=
      ".json";
  std::ofstream(report) << R"({"schema": "archfit.scan/1"})";
  const auto wrong_schema = run({kTorchError, "--report", arg(report)});
  EXPECT_EQ(wrong_schema.exit_code, 2) << wrong_schema.out;
  EXPECT_NE(wrong_schema.out.find(arg(report)), std::string::npos) << wrong_schema.out;
  EXPECT_NE(wrong_schema.out.find("archfit.check/1"), std::string::npos) << wrong_schema.out;
  std::ofstream(report) << "\x89PNG not json";
  const auto not_json = run({kTorchError, "--report", arg(report)});
  EXPECT_EQ(not_json.exit_code, 2) << not_json.out;
  EXPECT_NE(not_json.out.find("not JSON"), std::string::npos) << not_json.out;
  const auto both = run({kTorchError, "--gpu", "sm_120", "--report", arg(report)});
  EXPECT_EQ(both.exit_code, 2) << both.out;
  EXPECT_NE(both.out.find("give one"), std::string::npos) << both.out;
  fs::remove(report);
  const auto unknown_gpu = run({kTorchError, "--gpu", "RTX 9999"});
  EXPECT_EQ(unknown_gpu.exit_code, 2) << unknown_gpu.out;
  EXPECT_NE(unknown_gpu.out.find("--gpu"), std::string::npos) << unknown_gpu.out;
}
