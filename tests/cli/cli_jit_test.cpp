// `archfit jit compile` and `archfit cache`, run as a user runs them, with the
// cache in a scratch directory and the NVRTC of the local toolkit.
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

class CliJit : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_folder("archfit_cli_jit_" + std::to_string(::getpid()) + "_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const CommandResult probe = run({"jit", "compile", kernel(), "--arch", "sm_90", "--json"});
    if (probe.out.find("no libnvrtc") != std::string::npos ||
        probe.out.find("NVRTC was not found") != std::string::npos)
      GTEST_SKIP() << "no NVRTC here: " << probe.out;
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string kernel() { return std::string(ARCHFIT_KERNELS_DIR) + "/rmsnorm.cu"; }

  // stderr joins stdout so failures show in the log; the cache is private.
  CommandResult run(const std::vector<std::string>& arguments, Environment environment = {}) const {
    environment.emplace_back("ARCHFIT_CACHE_DIR", arg(dir_ / "cache"));
    return run_archfit(arguments, {environment});
  }

  // The Windows build's tests get fatbinary.exe from PyPI's CUDA 13
  // compiler wheel (tests/windows/place_cli_tier.sh), where the realworld
  // cache holds it: without it the bundle cases skip there, saying so. On
  // Linux the toolkit's is always there.
  static bool no_fatbinary_here(const CommandResult& result) {
#ifdef _WIN32
    return result.out.find("no fatbinary.exe found") != std::string::npos;
#else
    static_cast<void>(result);
    return false;
#endif
  }

  fs::path dir_;
};

}  // namespace

TEST_F(CliJit, TheSecondCompileOfTheSameSourceIsACacheHit) {
  const CommandResult first = run({"jit", "compile", kernel(), "--arch", "sm_120", "--json"});
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const auto a = nlohmann::json::parse(first.out.substr(first.out.find('{')));
  const CommandResult second = run({"jit", "compile", kernel(), "--arch", "sm_120", "--json"});
  ASSERT_EQ(second.exit_code, 0) << second.out;
  const auto b = nlohmann::json::parse(second.out.substr(second.out.find('{')));
  EXPECT_EQ(a["key"], b["key"]);
  EXPECT_NE(a["cache"], b["cache"]);
  EXPECT_EQ(b["cache"], "primary");  // a new process: from disk
  // The first missed, so it loaded NVRTC; the second knew NVRTC from the
  // discovery record and, hitting the cache, never loaded it.
  EXPECT_TRUE(a["nvrtc_loaded"]);
  EXPECT_FALSE(b["nvrtc_loaded"]);
  EXPECT_EQ(a["nvrtc"], b["nvrtc"]);
  EXPECT_EQ(b["scanned"], "sm_120");
  EXPECT_TRUE(b["confirmed"]);
  EXPECT_EQ(a["bytes"], b["bytes"]);
}

TEST_F(CliJit, OutputIsTheImageTheScannerConfirms) {
  const fs::path out = dir_ / "rmsnorm.ptx";
  const CommandResult run_result =
      run({"jit", "compile", kernel(), "--arch", "compute_90", "-o", arg(out)});
  ASSERT_EQ(run_result.exit_code, 0) << run_result.out;
  EXPECT_NE(run_result.out.find("scanned: compute_90 (confirmed)"), std::string::npos)
      << run_result.out;
  const CommandResult scan = run({"scan", "--json", arg(out)});
  ASSERT_EQ(scan.exit_code, 0) << scan.out;
  const auto doc = nlohmann::json::parse(scan.out);
  EXPECT_EQ(doc["files"][0]["images"][0]["arch"], "compute_90") << scan.out;
}

TEST_F(CliJit, ACompileErrorPrintsNvrtcsWholeLogAndExitsOne) {
  std::ofstream(dir_ / "bad.cu") << "__global__ void k() { oops }\n";
  const CommandResult result = run({"jit", "compile", arg(dir_ / "bad.cu"), "--arch", "sm_90"});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_NE(result.out.find("bad.cu(1): error: identifier \"oops\" is undefined"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("Options: --gpu-architecture=sm_90"), std::string::npos) << result.out;
}

TEST_F(CliJit, AnArchNvrtcDoesNotKnowExitsTwoListingTheOnesItDoes) {
  const CommandResult result = run({"jit", "compile", kernel(), "--arch", "sm_999"});
  EXPECT_EQ(result.exit_code, 2) << result.out;
  EXPECT_NE(result.out.find("cannot compile for sm_999; it knows sm_"), std::string::npos)
      << result.out;
}

TEST_F(CliJit, CacheListVerifyAndClearSeeTheEntryAndACorruptOneIsRemoved) {
  ASSERT_EQ(run({"jit", "compile", kernel(), "--arch", "sm_90"}).exit_code, 0);
  const CommandResult list = run({"cache", "list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.out;
  const auto entries = nlohmann::json::parse(list.out)["entries"];
  ASSERT_EQ(entries.size(), 1u) << list.out;
  // Flip the last byte of the image: the checksum no longer matches.
  const fs::path entry = path_of(entries[0]["path"].get<std::string>());
  {
    std::fstream file(entry, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(-1, std::ios::end);
    const char last = static_cast<char>(file.get());
    file.seekp(-1, std::ios::end);
    file.put(static_cast<char>(~last));
  }
  const CommandResult verify = run({"cache", "verify"});
  EXPECT_EQ(verify.exit_code, 1) << verify.out;
  EXPECT_NE(verify.out.find("1 bad"), std::string::npos) << verify.out;
  EXPECT_FALSE(fs::exists(entry));
  ASSERT_EQ(run({"jit", "compile", kernel(), "--arch", "sm_90"}).exit_code, 0);
  const CommandResult clear = run({"cache", "clear"});
  EXPECT_NE(clear.out.find("removed 1 entries"), std::string::npos) << clear.out;
}

TEST_F(CliJit, BundleCompilesEachArchInItsOwnProcessIntoOneFatbin) {
  const fs::path out = dir_ / "ops.fatbin";
  const CommandResult bundle = run(
      {"jit", "bundle", kernel(), "--arch", "sm_90,compute_120", "--jobs", "2", "-o", arg(out)});
  if (no_fatbinary_here(bundle)) GTEST_SKIP() << bundle.out;
  ASSERT_EQ(bundle.exit_code, 0) << bundle.out;
  const CommandResult scan = run({"scan", "--json", arg(out)});
  const auto doc = nlohmann::json::parse(scan.out);
  std::vector<std::string> archs;
  for (const auto& image : doc["files"][0]["images"]) archs.push_back(image["arch"]);
  EXPECT_EQ(archs, (std::vector<std::string>{"sm_90", "compute_120"})) << scan.out;
  // The second bundle finds every arch in the cache.
  const CommandResult again =
      run({"jit", "bundle", kernel(), "--arch", "sm_90,compute_120", "-o", arg(out)});
  EXPECT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(again.out.find("(built)"), std::string::npos) << again.out;
}

TEST_F(CliJit, BundleSaysWhichArchFailedAndWhatFatbinaryIsMissing) {
  const fs::path out = dir_ / "ops.fatbin";
  const CommandResult bad =
      run({"jit", "bundle", kernel(), "--arch", "sm_90,sm_999", "-o", arg(out)});
  if (no_fatbinary_here(bad)) GTEST_SKIP() << bad.out;
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("failed for sm_999"), std::string::npos) << bad.out;
  // NVRTC's own word, from the child that compiled it.
  EXPECT_NE(bad.out.find("cannot compile for sm_999; it knows sm_"), std::string::npos) << bad.out;
  const CommandResult no_tool = run({"jit", "bundle", kernel(), "--arch", "sm_90", "-o", arg(out)},
                                    {{"ARCHFIT_FATBINARY", "/nonexistent/fatbinary"}});
  EXPECT_NE(no_tool.exit_code, 0) << no_tool.out;
  EXPECT_NE(no_tool.out.find("/nonexistent/fatbinary"), std::string::npos) << no_tool.out;
}

// Each arch's process gets the bundle's NVRTC options: a define, an include
// folder named outside ASCII, another option.
TEST_F(CliJit, BundleHandsItsOptionsToEachArchsProcess) {
  const fs::path headers = dir_ / "Modèles 模型";
  fs::create_directories(headers);
  std::ofstream(headers / "archfit_bundle_test.h") << "#define ARCHFIT_FROM_HEADER 1\n";
  const fs::path source = dir_ / "needs_options.cu";
  std::ofstream(source) << "#include \"archfit_bundle_test.h\"\n"
                           "#if !defined(ARCHFIT_BUNDLE_DEFINE) || !ARCHFIT_FROM_HEADER\n"
                           "#error needs -DARCHFIT_BUNDLE_DEFINE and the header\n"
                           "#endif\n"
                           "extern \"C\" __global__ void twice(float* x) { x[0] *= 2; }\n";
  const fs::path out = dir_ / "options.fatbin";
  std::vector<std::string> common = {"jit", "bundle",     arg(source), "--arch", "sm_90,sm_120",
                                     "-I",  arg(headers), "-o",        arg(out)};
  const CommandResult without = run(common);
  if (no_fatbinary_here(without)) GTEST_SKIP() << without.out;
  EXPECT_EQ(without.exit_code, 1) << without.out;
  EXPECT_NE(without.out.find("needs -DARCHFIT_BUNDLE_DEFINE and the header"), std::string::npos)
      << without.out;
  common.insert(common.end(), {"-D", "ARCHFIT_BUNDLE_DEFINE", "--option=--std=c++17"});
  const CommandResult with = run(common);
  ASSERT_EQ(with.exit_code, 0) << with.out;
  EXPECT_NE(with.out.find("sm_90"), std::string::npos) << with.out;
  EXPECT_NE(with.out.find("sm_120"), std::string::npos) << with.out;
}
