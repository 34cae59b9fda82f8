#include "env/python_locate.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <optional>

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

// Bare `archfit check`: which environment it means, in the order a user expects.
class ChooseEnvironment : public PythonLocate {
 protected:
  std::map<std::string, std::string> variables_;
  std::optional<archfit::env::ChosenEnvironment> choose(const fs::path& cwd,
                                                        const std::string& path = "") {
    return archfit::env::choose_environment(
        cwd,
        [&](const char* name) {
          const auto found = variables_.find(name);
          return found == variables_.end() ? std::string() : found->second;
        },
        path);
  }
  // A venv with an interpreter that reports `site` as its sys.path.
  fs::path venv(const std::string& relative) {
    const fs::path site = dir(relative + "/lib/python3.12/site-packages");
    dir(relative + "/bin");
    script(relative + "/bin/python", "echo " + site.string());
    return root_ / relative;
  }
};

TEST_F(ChooseEnvironment, AnActivatedVenvWinsOverTheComfyuiTheUserStandsIn) {
  dir("ComfyUI/custom_nodes/pack");
  std::ofstream(root_ / "ComfyUI" / "main.py") << "";
  venv("ComfyUI/venv");
  const fs::path activated = venv("other");
  variables_["VIRTUAL_ENV"] = activated.string();
  variables_["CONDA_PREFIX"] = venv("conda").string();
  const auto chosen = choose(root_ / "ComfyUI" / "custom_nodes" / "pack");
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->source, "$VIRTUAL_ENV");
  EXPECT_EQ(chosen->where, activated);
  EXPECT_EQ(chosen->site_packages,
            std::vector<fs::path>{activated / "lib" / "python3.12" / "site-packages"});
  EXPECT_EQ(chosen->python, activated / "bin" / "python");
  EXPECT_FALSE(chosen->custom_nodes);

  variables_.erase("VIRTUAL_ENV");
  const auto conda = choose(root_);
  ASSERT_TRUE(conda);
  EXPECT_EQ(conda->source, "$CONDA_PREFIX");
  EXPECT_EQ(conda->where, root_ / "conda");
}

TEST_F(ChooseEnvironment, AVariableNamingNoEnvironmentIsAnErrorNamingIt) {
  variables_["VIRTUAL_ENV"] = dir("deleted-venv").string();
  const std::string error = error_of([&] { choose(root_); });
  EXPECT_NE(error.find("$VIRTUAL_ENV names " + (root_ / "deleted-venv").string()),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("deactivate it"), std::string::npos) << error;
}

TEST_F(ChooseEnvironment, FindsTheComfyuiAboveTheWorkingFolder) {
  // The portable build: ComfyUI/ beside python_embeded/, entered anywhere.
  dir("portable/ComfyUI/custom_nodes/pack/src");
  std::ofstream(root_ / "portable" / "ComfyUI" / "main.py") << "";
  const fs::path embedded = dir("portable/python_embeded/Lib/site-packages");
  for (const fs::path& cwd : {root_ / "portable", root_ / "portable" / "ComfyUI",
                              root_ / "portable" / "ComfyUI" / "custom_nodes" / "pack" / "src"}) {
    const auto chosen = choose(cwd);
    ASSERT_TRUE(chosen) << cwd;
    EXPECT_EQ(chosen->source, "ComfyUI portable") << cwd;
    EXPECT_EQ(chosen->where, root_ / "portable") << cwd;
    EXPECT_EQ(chosen->site_packages, std::vector<fs::path>{embedded}) << cwd;
    EXPECT_EQ(chosen->custom_nodes, root_ / "portable" / "ComfyUI" / "custom_nodes") << cwd;
  }

  // A checkout with its venv inside.
  dir("checkout/custom_nodes");
  std::ofstream(root_ / "checkout" / "main.py") << "";
  const fs::path venv_dir = venv("checkout/.venv");
  const auto checkout = choose(root_ / "checkout" / "custom_nodes");
  ASSERT_TRUE(checkout);
  EXPECT_EQ(checkout->source, "ComfyUI");
  EXPECT_EQ(checkout->where, root_ / "checkout");
  EXPECT_EQ(checkout->python, venv_dir / "bin" / "python");
}

TEST_F(ChooseEnvironment, OtherwiseThePython3OnPathWithTheComfyuiItRuns) {
  const fs::path site = dir("system/site-packages");
  dir("bin-empty");
  dir("bin-plain");
  script("bin-plain/python3", "echo wrong", false);  // not executable: skipped
  dir("bin");
  const fs::path python = script("bin/python3", "echo " + site.string());
  const std::string path = ":" + (root_ / "bin-empty").string() + ":" +
                           (root_ / "bin-plain").string() + ":" + (root_ / "bin").string();
  const auto plain = choose(dir("somewhere"), path);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->source, "python3 on PATH");
  EXPECT_EQ(plain->where, python);
  EXPECT_EQ(plain->python, python);
  EXPECT_EQ(plain->site_packages, std::vector<fs::path>{site});
  EXPECT_FALSE(plain->custom_nodes);

  // A ComfyUI with no Python of its own runs on that python3.
  dir("bare/custom_nodes");
  std::ofstream(root_ / "bare" / "main.py") << "";
  const auto bare = choose(root_ / "bare" / "custom_nodes", path);
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->source, "ComfyUI at " + (root_ / "bare").string() + ", python3 on PATH");
  EXPECT_EQ(bare->custom_nodes, root_ / "bare" / "custom_nodes");
  EXPECT_EQ(bare->site_packages, std::vector<fs::path>{site});

  EXPECT_FALSE(choose(root_ / "somewhere", (root_ / "bin-empty").string()));
}

// Issue 33: the Windows layouts people run image tools from, found from
// inside, on Linux as WSL reads them under /mnt/c; their interpreter is
// python.exe (never run here, so only its presence counts).
TEST_F(ChooseEnvironment, FindsWindowsLayoutsAndTheirPythonExe) {
  // ComfyUI Desktop's base folder: .venv (Windows layout), custom_nodes and
  // models; main.py lives inside the installed app, not here.
  const fs::path desktop_site = dir("Documents/ComfyUI/.venv/Lib/site-packages");
  dir("Documents/ComfyUI/.venv/Scripts");
  std::ofstream(root_ / "Documents/ComfyUI/.venv/Scripts/python.exe") << "MZ";
  dir("Documents/ComfyUI/custom_nodes/pack");
  dir("Documents/ComfyUI/models/checkpoints");
  const auto desktop = choose(root_ / "Documents/ComfyUI/custom_nodes/pack");
  ASSERT_TRUE(desktop);
  EXPECT_EQ(desktop->source, "ComfyUI Desktop");
  EXPECT_EQ(desktop->site_packages, std::vector<fs::path>{desktop_site});
  EXPECT_EQ(desktop->python, root_ / "Documents/ComfyUI/.venv/Scripts/python.exe");
  EXPECT_EQ(desktop->custom_nodes, root_ / "Documents/ComfyUI/custom_nodes");

  // The A1111 one-click package: webui\ beside system\python.
  const fs::path oneclick_site = dir("sd.webui/system/python/Lib/site-packages");
  std::ofstream(root_ / "sd.webui/system/python/python.exe") << "MZ";
  dir("sd.webui/webui/modules");
  dir("sd.webui/webui/extensions/ext");
  std::ofstream(root_ / "sd.webui/webui/webui.py") << "";
  for (const fs::path& cwd : {root_ / "sd.webui", root_ / "sd.webui/webui/extensions/ext"}) {
    const auto webui = choose(cwd);
    ASSERT_TRUE(webui) << cwd;
    EXPECT_EQ(webui->source, "A1111/Forge WebUI") << cwd;
    EXPECT_EQ(webui->site_packages, std::vector<fs::path>{oneclick_site}) << cwd;
    EXPECT_EQ(webui->python, root_ / "sd.webui/system/python/python.exe") << cwd;
  }

  // A Windows venv and a conda environment, stood in.
  const fs::path venv_site = dir("proj/env/Lib/site-packages");
  std::ofstream(root_ / "proj/env/pyvenv.cfg") << "home = C:\\Python312\n";
  dir("proj/env/Scripts");
  std::ofstream(root_ / "proj/env/Scripts/python.exe") << "MZ";
  const auto windows_venv = choose(dir("proj/env/Scripts"));
  ASSERT_TRUE(windows_venv);
  EXPECT_EQ(windows_venv->source, "venv");
  EXPECT_EQ(windows_venv->python, root_ / "proj/env/Scripts/python.exe");

  const fs::path conda_site = dir("miniconda3/envs/comfy/Lib/site-packages");
  dir("miniconda3/envs/comfy/conda-meta");
  std::ofstream(root_ / "miniconda3/envs/comfy/python.exe") << "MZ";
  const auto conda = choose(root_ / "miniconda3/envs/comfy");
  ASSERT_TRUE(conda);
  EXPECT_EQ(conda->source, "conda environment");
  EXPECT_EQ(conda->site_packages, std::vector<fs::path>{conda_site});
  EXPECT_EQ(conda->python, root_ / "miniconda3/envs/comfy/python.exe");
}
