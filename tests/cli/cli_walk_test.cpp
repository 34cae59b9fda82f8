// `archfit scan` and `archfit check` on trees built to mislead a walk or a
// terminal (issue 24): a link to /, a pseudo-filesystem, names carrying
// escape sequences and bytes that are not UTF-8.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "made_links.hpp"
#include "run_archfit.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kFixtures = ARCHFIT_FIXTURE_DIR;

// What the coreutils `base64` makes of `bytes`: the test's own witness.
std::string coreutils_base64(const std::string& bytes, const fs::path& scratch) {
  std::ofstream(scratch, std::ios::binary) << bytes;
  return run_test_program("/usr/bin/base64", {"-w0", arg(scratch)}, {}, true).out;
}

class CliWalk : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kFixtures / "sm_86_sm_89.so")) GTEST_SKIP() << "nvcc fixtures are not built";
    dir_ = scratch_folder("archfit_cli_walk_" + std::to_string(::getpid()) + "_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "site" / "pkg");
    fs::copy_file(kFixtures / "sm_86_sm_89.so", dir_ / "site" / "pkg" / "_C.so");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path dir_;
};

}  // namespace

// Found in issue 24: killed after 60–120 s with no output.
TEST_F(CliWalk, AScanOfAFolderWithALinkToRootEndsAndSaysWhatItDidNotFollow) {
  if (!archfit::testing::made_links(
          [&] { fs::create_directory_symlink("/", dir_ / "site" / "pkg" / "everything"); }))
    GTEST_SKIP() << archfit::testing::kNoLinks;
  const auto started = std::chrono::steady_clock::now();
  const CommandResult text = run_archfit({"scan", arg(dir_ / "site")});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
            10.0);
  EXPECT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find("1 files,"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("not followed: " + arg(dir_ / "site" / "pkg" / "everything") +
                          ": a symbolic link to /, outside " + arg(fs::canonical(dir_ / "site"))),
            std::string::npos)
      << text.out;

  const CommandResult json = run_archfit({"scan", "--json", "--no-progress", arg(dir_ / "site")});
  const auto document = nlohmann::json::parse(json.out);
  EXPECT_EQ(document["files"].size(), 1u);
  ASSERT_EQ(document["skipped"].size(), 1u);
  EXPECT_EQ(document["skipped"][0]["path"], arg(dir_ / "site" / "pkg" / "everything"));
}

// The same venv checked: the link is a note, its target is no component.
TEST_F(CliWalk, ACheckOfSitePackagesWithALinkOutsideNotesItAndJudgesOnlyWhatIsInside) {
  if (!archfit::testing::made_links([&] {
        fs::create_directory_symlink("/usr/local/cuda", dir_ / "site" / "pkg" / "toolkit");
      }))
    GTEST_SKIP() << archfit::testing::kNoLinks;
  const CommandResult run = run_archfit(
      {"check", "--json", "--no-plugins", "--gpu", "sm_86", "--site-packages", arg(dir_ / "site")});
  ASSERT_LE(run.exit_code, 1) << run.out;
  const auto report = nlohmann::json::parse(run.out.substr(run.out.find('{')));
  EXPECT_EQ(report["scan"]["files"], 1) << run.out;
  bool noted = false;
  for (const auto& finding : report["findings"])
    noted = noted || finding.get<std::string>().find("toolkit: not followed: a symbolic link to") !=
                         std::string::npos;
  EXPECT_TRUE(noted) << report["findings"].dump();
}

// Found in issue 26: a path that is not there was "nothing to judge", so
// `archfit check /typo` said fits and exited 0.
TEST_F(CliWalk, ACheckOfAPathThatIsNotThereFailsNamingIt) {
  const fs::path missing = dir_ / "no-such-site";
  const CommandResult run = run_archfit({"check", "--no-plugins", "--gpu", "sm_86", arg(missing)});
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("path " + arg(missing) + ": no such file or folder"), std::string::npos)
      << run.out;
  EXPECT_EQ(run.out.find("fits"), std::string::npos) << run.out;
}

TEST_F(CliWalk, ProcSelfIsRefusedNotWalked) {
#ifdef _WIN32
  // Under Wine "/proc/self" is Z:\proc\self, Linux's, which no Windows has.
  GTEST_SKIP() << "Windows has no /proc";
#endif
  if (!fs::exists("/proc/self/status")) GTEST_SKIP() << "no /proc here";
  const CommandResult run = run_archfit({"scan", "/proc/self"});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("not walked: it is on proc, a kernel pseudo-filesystem"),
            std::string::npos)
      << run.out;
}

// Found in issue 24: the escapes reached the terminal raw, and JSON put
// U+FFFD where 0xff was, so the file could not be found again.
TEST_F(CliWalk, NamesAreShownEscapedAndJsonCarriesTheirExactBytes) {
#ifdef _WIN32
  GTEST_SKIP() << "Windows allows neither control characters nor bytes outside UTF-16 in a name";
#endif
  const std::string name = std::string("lib\x1b[2J\x1b]0;owned\x07\xff") + ".so";
  fs::copy_file(kFixtures / "sm_86_sm_89.so", dir_ / "site" / name);
  const CommandResult text = run_archfit({"scan", arg(dir_ / "site")});
  EXPECT_EQ(text.out.find('\x1b'), std::string::npos) << "a raw escape reached the terminal";
  EXPECT_EQ(text.out.find('\x07'), std::string::npos);
  EXPECT_NE(text.out.find("lib\\x1b[2J\\x1b]0;owned\\x07\\xff.so"), std::string::npos) << text.out;

  const CommandResult json = run_archfit({"scan", "--json", "--no-progress", arg(dir_ / "site")});
  const auto document = nlohmann::json::parse(json.out);
  const std::string full = arg(dir_ / "site" / name);
  bool found = false;
  for (const auto& file : document["files"]) {
    if (!file.contains("path_bytes")) continue;
    found = true;
    EXPECT_EQ(file["path_bytes"], coreutils_base64(full, dir_ / "witness"));
  }
  EXPECT_TRUE(found) << json.out;
}

// Issue 34 row 4b: a hard-linked copy of torch's library elsewhere in the
// site (met first by the walk: its folder sorts first) once hid the PyTorch
// stack and its fix. The file is read once and judged under both names:
// the PyTorch stack still fails with its fix, and the copy is judged too.
TEST_F(CliWalk, AHardLinkedCopyOfALibraryDoesNotHideItsStack) {
  const fs::path site = dir_ / "demo";
  fs::copy(ARCHFIT_DEMO_SITE, site, fs::copy_options::recursive);
  fs::create_directories(site / "aaa_copy");
  fs::create_hard_link(site / "torch" / "lib" / "libtorch_cuda.so",
                       site / "aaa_copy" / "libtorch_cuda.so");
  const CommandResult run = run_archfit({"check", "--json", "--no-index", "--no-plugins", "--gpu",
                                         "sm_120", "--site-packages", arg(site)});
  ASSERT_EQ(run.exit_code, 1) << run.out;
  const auto report = nlohmann::json::parse(run.out.substr(run.out.find('{')));
  ASSERT_FALSE(report["stacks"].empty()) << run.out;
  EXPECT_EQ(report["stacks"][0]["name"], "PyTorch") << report["stacks"].dump();
  EXPECT_EQ(report["stacks"][0]["blocks"], true);
  EXPECT_EQ(report["summary"].get<std::string>().rfind("fails: PyTorch", 0), 0u)
      << report["summary"];
  bool copy_judged = false;
  for (const auto& stack : report["stacks"])
    copy_judged = copy_judged || stack["evidence"].get<std::string>().find("libtorch_cuda.so") !=
                                         std::string::npos &&
                                     stack["kind"] == "library";
  EXPECT_TRUE(copy_judged) << report["stacks"].dump();
}
