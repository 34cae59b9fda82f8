// `archfit install comfyui`: the node pack copied into custom_nodes with its
// binding, library and knowledge base inside; a second install needs
// --force; what is not a ComfyUI folder is refused. (tests/python/comfyui
// loads the installed copy in a Python with nothing else.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "run_archfit.hpp"

namespace fs = std::filesystem;

namespace {

// What the pack's binding loads, and its plugin helper, on this OS.
#ifdef _WIN32
const char* const kLibrary = "archfit.dll";
const char* const kHelper = "archfit-plugin-probe.exe";
#else
const char* const kLibrary = "libarchfit.so.0";
const char* const kHelper = "archfit-plugin-probe";
#endif

class CliInstall : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = scratch_folder("archfit_install_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "ComfyUI" / "custom_nodes");
    std::ofstream(root_ / "ComfyUI" / "main.py") << "# ComfyUI\n";
  }
  void TearDown() override { fs::remove_all(root_); }
  CommandResult install(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> arguments = {"install", "comfyui", arg(root_ / "ComfyUI")};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return run_archfit(arguments);
  }
  fs::path pack() const { return root_ / "ComfyUI" / "custom_nodes" / "comfyui-archfit"; }
  fs::path root_;
};

}  // namespace

TEST_F(CliInstall, ThePackGoesInWithItsBindingLibraryAndKnowledgeBase) {
  const auto result = install();
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const fs::path binding = pack() / "vendor" / "python" / "archfit";
  for (const fs::path& file :
       {pack() / "__init__.py", pack() / "nodes.py", pack() / "web" / "archfit.js",
        binding / "__init__.py", binding / "lib" / kLibrary,
        binding / "share" / "archfit" / "kb" / "gpus.yaml"})
    EXPECT_TRUE(fs::is_regular_file(file)) << file;
  // Plugins load only in archfit-plugin-probe, which the vendored library
  // finds at ../libexec/archfit: there, and it runs from there.
  const fs::path helper = binding / "libexec" / "archfit" / kHelper;
  ASSERT_TRUE(fs::is_regular_file(helper)) << helper;
#ifdef _WIN32
  // The test plugin here is the Linux build's; run_windows_smoke.sh loads a
  // Windows one through the pack's DLL and helper (its section 10).
#else
  EXPECT_EQ(::access(helper.c_str(), X_OK), 0) << helper;
  const std::string manifest =
      std::string(ARCHFIT_TEST_PLUGIN_DIR) + "/good/good.archfit-plugin.yaml";
  const auto probed = run_test_program(helper, {"1", "1", "5000", manifest}, {}, false);
  EXPECT_EQ(probed.exit_code, 0) << probed.out;
  EXPECT_NE(probed.out.find(R"("ending":"exited")"), std::string::npos)
      << probed.out.substr(0, 300);
#endif
  // Everything is inside: nothing left for ComfyUI-Manager to pip install.
  EXPECT_FALSE(fs::exists(pack() / "requirements.txt"));
  // Only the pack: no staging copy left beside it.
  size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(pack().parent_path())) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST_F(CliInstall, ASecondInstallNeedsForceAndThenReplacesTheOld) {
  ASSERT_EQ(install().exit_code, 0);
  std::ofstream(pack() / "stale.py") << "# from an older install\n";
  const auto again = install();
  EXPECT_EQ(again.exit_code, 2) << again.out;
  EXPECT_NE(again.out.find("--force"), std::string::npos) << again.out;
  EXPECT_TRUE(fs::exists(pack() / "stale.py"));
  const auto forced = install({"--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.out;
  EXPECT_FALSE(fs::exists(pack() / "stale.py"));
  EXPECT_TRUE(fs::exists(pack() / "__init__.py"));
}

TEST_F(CliInstall, AFolderThatIsNotComfyuiIsRefusedNamingIt) {
  const fs::path elsewhere = root_ / "Downloads";
  fs::create_directories(elsewhere);
  const auto result = run_archfit({"install", "comfyui", arg(elsewhere)});
  EXPECT_EQ(result.exit_code, 2) << result.out;
  EXPECT_NE(result.out.find(arg(elsewhere) + " is not a ComfyUI install"), std::string::npos)
      << result.out;
  EXPECT_TRUE(fs::is_empty(elsewhere));
}
