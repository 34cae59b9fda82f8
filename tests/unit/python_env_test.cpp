#include "env/python_env.hpp"
#include "native_path.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using archfit::env::parse_csv_line;
using archfit::env::parse_torch_version_py;
using archfit::env::read_site_packages;

namespace {

class SitePackagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("archfit_site_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const fs::path& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative, std::ios::binary) << text;
  }
  // A distribution as pip installs it: files plus a dist-info naming them.
  void install(const std::string& name, const std::string& version,
               const std::vector<std::string>& files) {
    const std::string dist_info = name + "-" + version + ".dist-info";
    std::string record;
    for (const auto& file : files) {
      write(file, "");
      record += file + ",sha256=abc,0\n";
    }
    record += dist_info + "/RECORD,,\n";
    write(dist_info + "/METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " +
                                       version + "\nSummary: x\n\nName: not-a-header\n");
    write(dist_info + "/RECORD", record);
  }
  fs::path root_;
};

}  // namespace

TEST_F(SitePackagesTest, AttributesEachFileToTheDistributionWhoseRecordListsIt) {
  install("xformers", "0.0.28.post1", {"xformers/_C.so", "xformers/__init__.py"});
  install("torch", "2.5.1+cu124", {"torch/lib/libtorch_cuda.so", "torch/__init__.py"});
  write("stray/ext.so", "");
  const auto site = read_site_packages(root_);
  ASSERT_EQ(site.distributions.size(), 2u);
  EXPECT_EQ(site.distributions[0].name, "torch");  // sorted by name
  const auto* owner = site.owner_of(root_ / "xformers" / "_C.so");
  ASSERT_NE(owner, nullptr);
  EXPECT_EQ(owner->name, "xformers");
  EXPECT_EQ(owner->version, "0.0.28.post1");
  ASSERT_NE(site.owner_of(root_ / "torch/lib/../lib/libtorch_cuda.so"), nullptr);  // normalised
  EXPECT_EQ(site.owner_of(root_ / "torch/lib/libtorch_cuda.so")->name, "torch");
  EXPECT_EQ(site.owner_of(root_ / "stray" / "ext.so"), nullptr);
  EXPECT_TRUE(site.problems.empty()) << site.problems.front().message;
}

// pip installs nvidia-cudnn-cu12 over the folder nvidia-cudnn-cu13 filled
// and uninstalls neither: both RECORDs list libcudnn.so.9. Whose bytes are on
// disk is the one whose RECORD gives the file's size; owner_of stays the
// first by name.
TEST_F(SitePackagesTest, OfTwoRecordsListingAFileTheInstallerIsTheOneWithItsSize) {
  const std::string shim = "nvidia/cudnn/lib/libcudnn.so.9";
  write("nvidia_cudnn_cu12-9.10.2.21.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: nvidia-cudnn-cu12\nVersion: 9.10.2.21\n");
  write("nvidia_cudnn_cu12-9.10.2.21.dist-info/RECORD", shim + ",sha256=a,125136\n");
  write("nvidia_cudnn_cu13-9.26.0.51.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: nvidia-cudnn-cu13\nVersion: 9.26.0.51\n");
  write("nvidia_cudnn_cu13-9.26.0.51.dist-info/RECORD",
        shim + ",sha256=b,133336\nnvidia/cudnn/lib/libcudnn_ext.so.9,sha256=c,8402008\n");
  const auto site = read_site_packages(root_);
  const auto owners = site.owners_of(root_ / shim);
  ASSERT_EQ(owners.size(), 2u);
  EXPECT_EQ(owners[0]->name, "nvidia-cudnn-cu12");
  EXPECT_EQ(owners[1]->name, "nvidia-cudnn-cu13");
  EXPECT_EQ(site.owner_of(root_ / shim)->name, "nvidia-cudnn-cu12");
  EXPECT_EQ(site.installer_of(root_ / shim, 133336)->name, "nvidia-cudnn-cu13");
  EXPECT_EQ(site.installer_of(root_ / shim, 125136)->name, "nvidia-cudnn-cu12");
  // Sizes that tell nothing: the first by name, as owner_of.
  EXPECT_EQ(site.installer_of(root_ / shim, 1)->name, "nvidia-cudnn-cu12");
  EXPECT_EQ(site.installer_of(root_ / "nvidia/cudnn/lib/libcudnn_ext.so.9", 0)->name,
            "nvidia-cudnn-cu13");
  EXPECT_EQ(site.installer_of(root_ / "nvidia/cudnn/lib/stray.so.9", 0), nullptr);
  EXPECT_TRUE(site.owners_of(root_ / "nvidia/cudnn/lib/stray.so.9").empty());
}

// Only what the scan reads is kept from a RECORD: a torch venv's list 17,000
// files, most of them sources and headers no one asks the owner of.
TEST_F(SitePackagesTest, KeepsOnlyTheRecordedFilesThatMayHoldDeviceCode) {
  install("torch", "2.8.0",
          {"torch/__init__.py", "torch/include/ATen/ATen.h", "torch/lib/libtorch_cuda.so",
           "torch/lib/libnvrtc-builtins.so.12.8", "torch/share/kernels.ptx"});
  const auto site = read_site_packages(root_);
  ASSERT_EQ(site.distributions.size(), 1u);
  std::vector<std::string> kept;
  for (const auto& file : site.distributions[0].files)
    kept.push_back(fs::path(file).lexically_relative(root_).string());
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<std::string>{
                      archfit::testing::native_path("torch/lib/libnvrtc-builtins.so.12.8"),
                      archfit::testing::native_path("torch/lib/libtorch_cuda.so"),
                      archfit::testing::native_path("torch/share/kernels.ptx")}));
  EXPECT_EQ(site.owner_of(root_ / "torch" / "__init__.py"), nullptr);
  EXPECT_EQ(site.owner_of(root_ / "torch/share/kernels.ptx")->name, "torch");
}

TEST_F(SitePackagesTest, ReadsTorchVersionAndCudaTagWithoutImportingTorch) {
  install("torch", "2.5.1+cu124", {"torch/__init__.py"});
  write("torch/version.py",
        "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', "
        "'hip']\n"
        "__version__ = '2.5.1+cu124'\ndebug = False\ncuda: Optional[str] = '12.4'\n"
        "git_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'\nhip: Optional[str] = None\n");
  write("torch/__init__.py", "raise SystemExit('importing torch is not allowed here')\n");
  const auto site = read_site_packages(root_);
  ASSERT_TRUE(site.torch);
  EXPECT_EQ(site.torch->version, "2.5.1+cu124");
  EXPECT_EQ(site.torch->cuda, "12.4");
  EXPECT_EQ(site.torch->hip, "");
  EXPECT_EQ(site.torch->version_file, root_ / "torch" / "version.py");
}

TEST(TorchVersionPy, CpuAndRocmBuildsHaveNoCudaTag) {
  const auto cpu =
      parse_torch_version_py("__version__ = '2.4.0+cpu'\ncuda: Optional[str] = None\n");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->version, "2.4.0+cpu");
  EXPECT_EQ(cpu->cuda, "");
  const auto rocm = parse_torch_version_py(
      "__version__ = \"2.5.1+rocm6.2\"\ncuda = None\nhip = \"6.2.41133\"\r\n");
  ASSERT_TRUE(rocm);
  EXPECT_EQ(rocm->cuda, "");
  EXPECT_EQ(rocm->hip, "6.2.41133");
  EXPECT_FALSE(parse_torch_version_py("cuda = '12.4'\n"));  // no __version__
  EXPECT_FALSE(parse_torch_version_py(""));
}

TEST(RecordCsv, HandlesQuotedPathsWithCommasAndQuotes) {
  EXPECT_EQ(parse_csv_line("a/b.so,sha256=x,12"),
            (std::vector<std::string>{"a/b.so", "sha256=x", "12"}));
  EXPECT_EQ(parse_csv_line("\"a,b/c \"\"d\"\".so\",,"),
            (std::vector<std::string>{"a,b/c \"d\".so", "", ""}));
  EXPECT_EQ(parse_csv_line(""), (std::vector<std::string>{""}));
}

TEST_F(SitePackagesTest, BrokenDistInfoIsAProblemNamingTheFileAndTheRestIsStillRead) {
  install("good", "1.0", {"good/_ext.so"});
  write("broken-2.0.dist-info/RECORD", "\n,sha256=x,1\n");  // no METADATA, a line without a path
  fs::create_directories(root_ / "unreadable-3.0.dist-info" / "RECORD");  // a directory, not a file
  write("unreadable-3.0.dist-info/METADATA", "Name: unreadable\n");       // no Version header
  const auto site = read_site_packages(root_);
  ASSERT_EQ(site.distributions.size(), 3u);
  EXPECT_EQ(site.owner_of(root_ / "good" / "_ext.so")->name, "good");
  const auto* broken = &site.distributions[0];
  EXPECT_EQ(broken->name, "broken");  // from the folder name when METADATA is missing
  EXPECT_EQ(broken->version, "2.0");
  std::string all;
  for (const auto& problem : site.problems) all += problem.message + "\n";
  EXPECT_NE(all.find(archfit::testing::native_path("broken-2.0.dist-info/METADATA")),
            std::string::npos)
      << all;
  EXPECT_NE(all.find(archfit::testing::native_path("broken-2.0.dist-info/RECORD:2: no path")),
            std::string::npos)
      << all;
  EXPECT_NE(all.find(archfit::testing::native_path("unreadable-3.0.dist-info/RECORD")),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("no Name or Version header"), std::string::npos) << all;
}

TEST_F(SitePackagesTest, MissingDirectoryIsAProblemNotACrash) {
  const auto site = read_site_packages(root_ / "no-such-dir");
  EXPECT_TRUE(site.distributions.empty());
  ASSERT_EQ(site.problems.size(), 1u);
  EXPECT_NE(site.problems[0].message.find("cannot list"), std::string::npos);
}

TEST_F(SitePackagesTest, TorchVersionWithoutVersionIsAProblem) {
  write("torch/version.py", "debug = False\n");
  const auto site = read_site_packages(root_);
  EXPECT_FALSE(site.torch);
  ASSERT_EQ(site.problems.size(), 1u);
  EXPECT_NE(site.problems[0].message.find(
                archfit::testing::native_path("torch/version.py has no __version__")),
            std::string::npos);
}

// A Name or Version longer than any real one (a 15 MiB Name once made 299 MB
// of JSON) is no name: the folder's stands in, and the site says why.
TEST_F(SitePackagesTest, AnOverlongNameIsRefusedForTheFolderName) {
  write("huge-1.0.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: " + std::string(1 << 20, 'a') + "\nVersion: 1.0\n");
  write("huge-1.0.dist-info/RECORD", "");
  const auto site = archfit::env::read_site_packages(root_);
  ASSERT_EQ(site.distributions.size(), 1u);
  EXPECT_EQ(site.distributions[0].name, "huge");
  EXPECT_EQ(site.distributions[0].version, "1.0");
  ASSERT_FALSE(site.problems.empty());
  EXPECT_NE(site.problems[0].message.find("longer than 256 bytes"), std::string::npos)
      << site.problems[0].message;
}
