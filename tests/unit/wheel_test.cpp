// env/wheel (what a .whl says about itself) and `check --wheel`: judging a
// community wheel against a GPU before installing it.
#include "env/wheel.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "check/check.hpp"
#include "check_resources.hpp"
#include "wheel_builder.hpp"

namespace fs = std::filesystem;
using archfit::check::CheckError;
using archfit::check::OverallVerdict;
using archfit::compat::Verdict;
using archfit::env::read_wheel;
using archfit::test::file_content;
using archfit::test::write_zip;

namespace {

class WheelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fixtures_ = ARCHFIT_FIXTURE_DIR;
    if (!fs::exists(fixtures_ / "sm_86_sm_89.so"))
      GTEST_SKIP() << "nvcc fixtures are not built in " << fixtures_;
    dir_ = fs::temp_directory_path() /
           ("archfit_wheel_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Shaped like PyPI's torch 2.5.1 wheel: SASS sm_86/sm_89, no PTX.
  // `more`: further members.
  fs::path torch_wheel(const std::string& platform = "manylinux1_x86_64",
                       const std::vector<archfit::test::ZipEntry>& more = {}) {
    const fs::path wheel = dir_ / ("torch-2.5.1-cp311-cp311-" + platform + ".whl");
    std::vector<archfit::test::ZipEntry> members = {
        {"torch/lib/libtorch_cuda.so", file_content(fixtures_ / "sm_86_sm_89.so")},
        {"torch/version.py", "__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\n"},
        {"torch-2.5.1.dist-info/METADATA",
         "Metadata-Version: 2.1\nName: torch\n"
         "Version: 2.5.1\n\nlong description\n"},
        {"torch-2.5.1.dist-info/WHEEL",
         "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"
         "Tag: cp311-cp311-" +
             platform + "\n"}};
    members.insert(members.end(), more.begin(), more.end());
    write_zip(wheel, members);
    return wheel;
  }

  // The torch wheel with a member of 32 MiB of zeros (32 KB deflated): past
  // the budget of 32 bytes out per byte of wheel, with no floor.
  fs::path torch_wheel_with_a_bomb() {
    return torch_wheel("manylinux1_x86_64",
                       {{"torch/lib/libbomb.so", std::string(32u << 20, '\0')}});
  }

  archfit::check::CheckReport check(const fs::path& wheel, const std::string& gpu) {
    archfit::check::CheckRequest options;
    options.gpus = {gpu};
    options.driver = "570.86";
    options.wheels = {wheel};
    auto resources = archfit::testing::check_resources("/no-driver-here/libcuda.so.1");
    resources.archive_limits.floor_bytes = 0;  // the ratio alone decides, as for a large wheel
    return archfit::check::run_check(options, resources);
  }

  fs::path fixtures_, dir_;
};

}  // namespace

TEST_F(WheelTest, NameVersionTagsAndTorchBuildComeFromInsideTheWheel) {
  const auto wheel = read_wheel(torch_wheel());
  EXPECT_TRUE(wheel.problems.empty()) << wheel.problems.front().message;
  EXPECT_EQ(wheel.name, "torch");
  EXPECT_EQ(wheel.version, "2.5.1");
  EXPECT_EQ(wheel.tags, (std::vector<std::string>{"cp311-cp311-manylinux1_x86_64"}));
  ASSERT_TRUE(wheel.torch);
  EXPECT_EQ(wheel.torch->version, "2.5.1+cu124");
  EXPECT_EQ(wheel.torch->cuda, "12.4");
  EXPECT_TRUE(wheel.targets_a_read_platform());
  EXPECT_FALSE(wheel.targets_windows());
}

TEST_F(WheelTest, WithoutMetadataTheFileNameSaysNameVersionAndEveryTagOfACompressedSet) {
  const fs::path path = dir_ / "fastops-0.3-1-cp310.cp311-abi3-manylinux2014_x86_64.whl";
  write_zip(path, {{"fastops/_C.so", file_content(fixtures_ / "sm_86_sm_89.so")}});
  const auto wheel = read_wheel(path);
  EXPECT_EQ(wheel.name, "fastops");
  EXPECT_EQ(wheel.version, "0.3");
  EXPECT_EQ(wheel.tags, (std::vector<std::string>{"cp310-abi3-manylinux2014_x86_64",
                                                  "cp311-abi3-manylinux2014_x86_64"}));
  ASSERT_EQ(wheel.problems.size(), 1u);
  EXPECT_NE(wheel.problems[0].message.find("no *.dist-info/METADATA"), std::string::npos);
}

TEST_F(WheelTest, ACorruptWheelIsAProblemNamingTheFile) {
  const fs::path path = dir_ / "broken-1.0-py3-none-any.whl";
  std::ofstream(path) << "PK but not really";
  const auto wheel = read_wheel(path);
  ASSERT_FALSE(wheel.problems.empty());
  EXPECT_NE(wheel.problems.back().message.find(path.string()), std::string::npos);
  EXPECT_EQ(wheel.name, "broken");  // still named, from the file name
}

// A WHEEL file whose Tag line names nothing once threw out of read_wheel
// (found by fuzz_wheel; tests/fuzz/regressions/wheel/tag_line_with_no_tag.whl).
TEST_F(WheelTest, AnEmptyTagLineIsSkipped) {
  const fs::path path = dir_ / "ops-1.0-cp311-cp311-linux_x86_64.whl";
  write_zip(path, {{"ops-1.0.dist-info/METADATA", "Name: ops\nVersion: 1.0\n"},
                   {"ops-1.0.dist-info/WHEEL",
                    "Wheel-Version: 1.0\nTag:    \nTag:\nTag: py3-none-any\n"}});
  const auto wheel = read_wheel(path);
  EXPECT_TRUE(wheel.problems.empty());
  EXPECT_EQ(wheel.tags, (std::vector<std::string>{"py3-none-any"}));
}

TEST_F(WheelTest, CheckJudgesTheWheelAsItsDistributionWithTheTorchFix) {
  const fs::path wheel = torch_wheel();
  const auto report = check(wheel, "RTX 5090");
  EXPECT_EQ(report.verdict, OverallVerdict::fails);
  ASSERT_EQ(report.components.size(), 1u);
  const auto& torch = report.components[0];
  EXPECT_EQ(torch.component.name, "torch");
  EXPECT_EQ(torch.component.version, "2.5.1");
  EXPECT_EQ(torch.component.root, wheel);
  EXPECT_EQ(torch.verdict, Verdict::no_image);
  EXPECT_NE(torch.fix.summary.find("torch"), std::string::npos) << torch.fix.summary;
  ASSERT_EQ(torch.binaries.size(), 1u);
  EXPECT_EQ(torch.binaries[0].path, wheel.string() + "!/torch/lib/libtorch_cuda.so");
  EXPECT_EQ(report.torch, "2.5.1+cu124");
  ASSERT_EQ(report.wheels.size(), 1u);
  EXPECT_EQ(report.wheels[0].tags.front(), "cp311-cp311-manylinux1_x86_64");
}

TEST_F(WheelTest, TheSameWheelFitsAnRtx4090) {
  const auto report = check(torch_wheel(), "RTX 4090");
  EXPECT_EQ(report.verdict, OverallVerdict::fits);
  ASSERT_EQ(report.components.size(), 1u);
  EXPECT_EQ(report.components[0].verdict, Verdict::native);
}

// Issue 33: Windows wheels are read (their .dll/.pyd are PE files); only a
// platform no CUDA build targets is said to be unjudged.
TEST_F(WheelTest, AWindowsWheelIsJudgedAndAMacosWheelIsSaidToBeUnjudged) {
  const auto windows = check(torch_wheel("win_amd64"), "RTX 4090");
  EXPECT_TRUE(read_wheel(torch_wheel("win_amd64")).targets_windows());
  for (const auto& finding : windows.findings)
    EXPECT_EQ(finding.find("were not judged"), std::string::npos) << finding;
  EXPECT_FALSE(windows.components.empty());
  const auto mac = check(torch_wheel("macosx_11_0_arm64"), "RTX 4090");
  bool said = false;
  for (const auto& finding : mac.findings)
    said |= finding.find("macosx_11_0_arm64, neither Linux nor Windows") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST_F(WheelTest, AMissingWheelIsACheckError) {
  EXPECT_THROW(check(dir_ / "nothere-1.0-py3-none-any.whl", "RTX 4090"), CheckError);
  const fs::path not_wheel = dir_ / "notes.txt";
  std::ofstream(not_wheel) << "x";
  EXPECT_THROW(check(not_wheel, "RTX 4090"), CheckError);
}

// Issue 24: a wheel that fits but for a member past its decompression budget
// (not read, so not judged) is unknown, not fits, and says which and why.
TEST_F(WheelTest, AWheelWithAMemberPastItsBudgetIsUnknownNotFits) {
  const fs::path wheel = torch_wheel_with_a_bomb();
  const auto report = check(wheel, "RTX 4090");
  EXPECT_EQ(report.verdict, OverallVerdict::unknown);
  ASSERT_EQ(report.unread.size(), 1u);
  EXPECT_EQ(report.unread[0].rfind(wheel.string() + "!/torch/lib/libbomb.so: not read: ", 0), 0u)
      << report.unread[0];
  EXPECT_EQ(report.summary.rfind("unknown: " + wheel.string() + "!/torch/lib/libbomb.so", 0), 0u)
      << report.summary;
  EXPECT_NE(report.summary.find("decompression budget"), std::string::npos) << report.summary;
  // What was read is still judged.
  ASSERT_EQ(report.components.size(), 1u);
  EXPECT_EQ(report.components[0].verdict, Verdict::native);
}

// A failure that was read stays a failure: no unread member can make it fit.
TEST_F(WheelTest, AWheelThatFailsStillFailsWithAMemberPastItsBudget) {
  const auto report = check(torch_wheel_with_a_bomb(), "RTX 5090");
  EXPECT_EQ(report.verdict, OverallVerdict::fails);
  EXPECT_EQ(report.unread.size(), 1u);
  EXPECT_EQ(report.summary.rfind("fails: ", 0), 0u) << report.summary;
}

// A wheel whose entries overlap is refused whole: nothing in it is judged,
// and nothing is said to fit.
TEST_F(WheelTest, AWheelWhoseMembersOverlapIsUnknownAndAProblemOfItsOwn) {
  const fs::path wheel = dir_ / "torch-2.5.1-cp311-cp311-manylinux1_x86_64.whl";
  archfit::test::write_overlapping_zip(
      wheel, {"torch/lib/libtorch_cuda.so", "torch/lib/libc10_cuda.so", "torch/lib/libcaffe2.so"},
      std::string(1 << 20, '\0'));
  const auto read = read_wheel(wheel);
  ASSERT_EQ(read.problems.size(), 1u);
  EXPECT_NE(read.problems[0].message.find("the members overlap"), std::string::npos)
      << read.problems[0].message;

  const auto report = check(wheel, "RTX 4090");
  EXPECT_EQ(report.verdict, OverallVerdict::unknown);
  ASSERT_EQ(report.unread.size(), 1u);
  EXPECT_EQ(
      report.summary.rfind("unknown: " + wheel.string() + ": not read: its 3 members claim", 0), 0u)
      << report.summary;
}
