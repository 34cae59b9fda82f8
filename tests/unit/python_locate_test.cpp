#include "env/python_locate.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>

namespace fs = std::filesystem;
using archfit::env::locate_comfyui;
using archfit::env::LocateError;
using archfit::env::site_packages_of_python;
using archfit::env::site_packages_of_venv;

namespace {

class PythonLocate : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("archfit_locate_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path script(const std::string& name, const std::string& body, bool executable = true) {
    const fs::path path = root_ / name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    if (executable) ::chmod(path.c_str(), 0755);
    return path;
  }
  fs::path dir(const std::string& relative) {
    fs::create_directories(root_ / relative);
    return root_ / relative;
  }
  std::string error_of(const std::function<void()>& call) {
    try {
      call();
    } catch (const LocateError& error) {
      return error.what();
    }
    return "(no error)";
  }
  fs::path root_;
};

}  // namespace

TEST_F(PythonLocate, KeepsTheSitePackagesOnTheInterpretersSysPath) {
  const fs::path site = dir("env/lib/python3.11/site-packages");
  const fs::path python =
      script("python", "printf '%s\\n' /usr/lib/python311.zip " + site.string() + " " +
                           (root_ / "missing/site-packages").string() + " " + root_.string());
  EXPECT_EQ(site_packages_of_python(python), std::vector<fs::path>{site});
}

TEST_F(PythonLocate, RealDebianPythonReportsItsDistPackages) {
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "/usr/bin/python3 is not installed";
  const auto found = site_packages_of_python("/usr/bin/python3");
  EXPECT_TRUE(std::any_of(found.begin(), found.end(),
                          [](const fs::path& p) { return p.filename() == "dist-packages"; }));
}

TEST_F(PythonLocate, APythonThatFailsHangsOrIsMissingIsAClearError) {
  EXPECT_NE(
      error_of([&] { site_packages_of_python(script("failing", "exit 3")); }).find("exit status 3"),
      std::string::npos);
  EXPECT_NE(error_of([&] {
              site_packages_of_python(script("hanging", "sleep 30"),
                                      std::chrono::milliseconds(300));
            }).find("did not answer within 300 ms"),
            std::string::npos);
  EXPECT_NE(error_of([&] { site_packages_of_python(root_ / "nope"); }).find("no Python at"),
            std::string::npos);
  EXPECT_NE(
      error_of([&] { site_packages_of_python(script("plain", "true", false)); }).find("cannot run"),
      std::string::npos);
  EXPECT_NE(
      error_of([&] { site_packages_of_python(script("empty", "true")); }).find("no site-packages"),
      std::string::npos);
}

TEST_F(PythonLocate, FindsTheSitePackagesOfPosixAndWindowsLayouts) {
  const fs::path posix = dir("venv/lib/python3.12/site-packages");
  EXPECT_EQ(site_packages_of_venv(root_ / "venv"), std::vector<fs::path>{posix});
  const fs::path windows = dir("python_embeded/Lib/site-packages");
  EXPECT_EQ(site_packages_of_venv(root_ / "python_embeded"), std::vector<fs::path>{windows});
  EXPECT_NE(error_of([&] {
              site_packages_of_venv(dir("not-a-venv"));
            }).find("is not a Python environment"),
            std::string::npos);
}

TEST_F(PythonLocate, FindsComfyuiCheckoutsAndThePortableBuild) {
  dir("checkout/custom_nodes");
  std::ofstream(root_ / "checkout" / "main.py") << "";
  const fs::path venv_site = dir("checkout/venv/lib/python3.11/site-packages");
  const auto checkout = locate_comfyui(root_ / "checkout");
  EXPECT_EQ(checkout.custom_nodes, root_ / "checkout" / "custom_nodes");
  EXPECT_EQ(checkout.site_packages, std::vector<fs::path>{venv_site});

  dir("portable/ComfyUI/custom_nodes");
  std::ofstream(root_ / "portable" / "ComfyUI" / "main.py") << "";
  const fs::path embedded = dir("portable/python_embeded/Lib/site-packages");
  const auto portable = locate_comfyui(root_ / "portable");
  EXPECT_EQ(portable.root, root_ / "portable" / "ComfyUI");
  EXPECT_EQ(portable.site_packages, std::vector<fs::path>{embedded});

  EXPECT_NE(error_of([&] { locate_comfyui(dir("elsewhere")); }).find("is not a ComfyUI install"),
            std::string::npos);
}
