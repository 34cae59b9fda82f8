// `archfit explain` as a user runs it: text, a log file, stdin; its exit codes.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "run_archfit.hpp"

namespace fs = std::filesystem;

namespace {

CommandResult run(const std::string& arguments) { return run_archfit("explain " + arguments); }

const std::string kCorpus = std::string(ARCHFIT_TEST_DATA_DIR) + "/errors/";

}  // namespace

TEST(CliExplain, ARecognisedMessageExitsZeroWithTheFix) {
  const auto result =
      run("'RuntimeError: CUDA error: no kernel image is available for execution on the device'");
  EXPECT_EQ(result.exit_code, 0) << result.out;
  EXPECT_NE(result.out.find("no-kernel-image (high confidence)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("fix        1. "), std::string::npos) << result.out;
}

TEST(CliExplain, ALogFileGivesItsLastErrorAsJson) {
  const auto result = run("--json --file '" + kCorpus + "invokeai_driver_insufficient.txt'");
  EXPECT_EQ(result.exit_code, 0) << result.out;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["schema"], "archfit.diagnosis/1");
  EXPECT_EQ(json["category"], "driver-too-old");
}

TEST(CliExplain, StdinIsReadAndAnUnknownErrorExitsOne) {
  const auto result = run("< /dev/null");
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_NE(result.out.find("not recognised"), std::string::npos) << result.out;
  EXPECT_EQ(run("\"KeyError: 'model'\"").exit_code, 1);
}

TEST(CliExplain, AMissingFileExitsTwoNamingIt) {
  const auto result = run("--file /no/such/comfyui.log");
  EXPECT_EQ(result.exit_code, 2) << result.out;
  EXPECT_NE(result.out.find("/no/such/comfyui.log"), std::string::npos) << result.out;
}
