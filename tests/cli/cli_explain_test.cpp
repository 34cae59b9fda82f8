// `archfit explain` as a user runs it: text, a log file, stdin; its exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace fs = std::filesystem;

namespace {

struct CommandResult {
  int exit_code = -1;
  std::string out;
};

CommandResult run(const std::string& arguments) {
  CommandResult result;
  const std::string command = std::string(ARCHFIT_CLI) + " explain " + arguments + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;)
    result.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

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
