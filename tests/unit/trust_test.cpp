// sys/trust: paths from the environment ignored when setuid, and folders
// and files that someone else could write to refused with the reason, for
// the kernel cache and for plugins.
#include "sys/trust.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "plugin/plugin_host.hpp"
#include "saved_env.hpp"

namespace fs = std::filesystem;
using archfit::sys::OtherWriters;
using archfit::sys::trusted_path_variable;
using archfit::sys::untrusted_because;
using archfit::sys::untrusted_below;
using archfit::sys::untrusted_path_chain;

namespace {

constexpr uid_t kNobody = 65534;

class TrustTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("archfit_trust_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::chmod(dir_.c_str(), 0755);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(TrustTest, AVariableIsReadUnlessEmpty) {
  archfit::testing::SavedEnv saved({"ARCHFIT_PLUGIN_PATH"});
  archfit::testing::set_env("ARCHFIT_PLUGIN_PATH", "/opt/plugins");
  ASSERT_NE(trusted_path_variable("ARCHFIT_PLUGIN_PATH"), nullptr);
  EXPECT_STREQ(trusted_path_variable("ARCHFIT_PLUGIN_PATH"), "/opt/plugins");
  archfit::testing::set_env("ARCHFIT_PLUGIN_PATH", "");
  EXPECT_EQ(trusted_path_variable("ARCHFIT_PLUGIN_PATH"), nullptr);
}

TEST_F(TrustTest, WritableByOthersIsRefusedNamingTheModeAndTheFix) {
  ::chmod(dir_.c_str(), 0777);
  const std::string why = untrusted_because(dir_, "plugins", OtherWriters::group);
  EXPECT_NE(why.find("writable by others (mode 0777)"), std::string::npos) << why;
  EXPECT_NE(why.find("someone else could plant plugins there"), std::string::npos) << why;
  EXPECT_NE(why.find("chmod go-w " + dir_.string()), std::string::npos) << why;
  ::chmod(dir_.c_str(), 0755);
  EXPECT_EQ(untrusted_because(dir_, "plugins", OtherWriters::group), "");
}

TEST_F(TrustTest, AGroupMayWriteToPluginFoldersButNotToTheCache) {
  ::chmod(dir_.c_str(), 0775);  // a user's folder under umask 002
  EXPECT_EQ(untrusted_because(dir_, "plugins", OtherWriters::group), "");
  const std::string why = untrusted_because(dir_, "kernels");
  EXPECT_NE(why.find("writable by its group (mode 0775)"), std::string::npos) << why;
}

TEST_F(TrustTest, AnotherUsersFolderIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give a folder to another user here";
  ASSERT_EQ(::chown(dir_.c_str(), kNobody, kNobody), 0);
  const std::string why = untrusted_because(dir_, "plugins", OtherWriters::group);
  EXPECT_NE(why.find("owned by uid 65534, not by this user (uid 0)"), std::string::npos) << why;
}

TEST_F(TrustTest, AMissingPathIsLeftToTheCaller) {
  EXPECT_EQ(untrusted_because(dir_ / "missing", "plugins"), "");
}

// A plugin folder or library anyone can write to is never loaded: the host
// rejects it with the reason and loads the others.
// A kernel cache's v1/<shard>: each folder below the trusted root is judged,
// and a symbolic link where archfit keeps a folder of its own is refused.
TEST_F(TrustTest, FoldersBelowATrustedRootAreEachJudgedAndMayNotBeLinks) {
  const fs::path shard = dir_ / "v1" / "ab";
  fs::create_directories(shard);
  ::chmod((dir_ / "v1").c_str(), 0700);
  ::chmod(shard.c_str(), 0700);
  EXPECT_EQ(untrusted_below(dir_, shard, "kernels"), "");
  EXPECT_EQ(untrusted_below(dir_, dir_ / "v1" / "cd", "kernels"), "") << "not made yet";

  ::chmod((dir_ / "v1").c_str(), 0777);
  std::string why = untrusted_below(dir_, shard, "kernels");
  EXPECT_EQ(why.rfind((dir_ / "v1").string() + ": it is writable by others (mode 0777)", 0), 0u)
      << why;
  ::chmod((dir_ / "v1").c_str(), 0700);
  ::chmod(shard.c_str(), 0770);
  EXPECT_NE(untrusted_below(dir_, shard, "kernels").find("writable by its group"),
            std::string::npos);

  fs::remove_all(shard);
  fs::create_directories(dir_ / "elsewhere");
  fs::create_directory_symlink(dir_ / "elsewhere", shard);
  why = untrusted_below(dir_, shard, "kernels");
  EXPECT_EQ(why, shard.string() +
                     " is a symbolic link where archfit keeps a folder of its own, so someone "
                     "replaced it; remove it (rm " +
                     shard.string() + ")");
}

// ARCHFIT_NVRTC and the like: every folder on the file's real path counts,
// except that a sticky shared folder (/tmp) stands for its owner only.
TEST_F(TrustTest, AFileChosenFromOutsideIsJudgedAlongItsWholeRealPath) {
  fs::create_directories(dir_ / "lib");
  ::chmod((dir_ / "lib").c_str(), 0755);
  std::ofstream(dir_ / "lib" / "libnvrtc.so.13") << "x";
  ::chmod((dir_ / "lib" / "libnvrtc.so.13").c_str(), 0644);
  EXPECT_EQ(untrusted_path_chain(dir_ / "lib" / "libnvrtc.so.13", "libraries"), "")
      << "under " << fs::temp_directory_path() << " (sticky), in folders of this user";

  ::chmod((dir_ / "lib").c_str(), 0777);
  std::string why = untrusted_path_chain(dir_ / "lib" / "libnvrtc.so.13", "libraries");
  EXPECT_EQ(why.rfind((dir_ / "lib").string() + ": it is writable by others (mode 0777)", 0), 0u)
      << why;
  // Reached through a link, the real path is judged too.
  fs::create_directory_symlink(dir_ / "lib", dir_ / "alias");
  EXPECT_EQ(untrusted_path_chain(dir_ / "alias" / "libnvrtc.so.13", "libraries"), why);
  // And a link to a sound file, in a folder anyone can write to, can be swapped.
  ::chmod((dir_ / "lib").c_str(), 0755);
  fs::create_directories(dir_ / "open");
  ::chmod((dir_ / "open").c_str(), 0777);
  fs::create_symlink(dir_ / "lib" / "libnvrtc.so.13", dir_ / "open" / "libnvrtc.so.13");
  EXPECT_EQ(untrusted_path_chain(dir_ / "open" / "libnvrtc.so.13", "libraries")
                .rfind((dir_ / "open").string() + ": it is writable by others", 0),
            0u);
  ::chmod((dir_ / "lib").c_str(), 0755);
  ::chmod((dir_ / "lib" / "libnvrtc.so.13").c_str(), 0666);
  // The file itself failing: the caller names it, so no prefix.
  EXPECT_EQ(untrusted_path_chain(dir_ / "lib" / "libnvrtc.so.13", "libraries")
                .rfind("it is writable by others (mode 0666)", 0),
            0u);
  EXPECT_EQ(untrusted_path_chain(dir_ / "lib" / "missing.so", "libraries"), "");
}

TEST_F(TrustTest, AFileInAnotherUsersFolderIsRefusedNamingTheFix) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give a folder to another user here";
  fs::create_directories(dir_ / "theirs");
  std::ofstream(dir_ / "theirs" / "libnvrtc.so.13") << "x";
  ASSERT_EQ(::chown((dir_ / "theirs").c_str(), kNobody, kNobody), 0);
  const std::string why = untrusted_path_chain(dir_ / "theirs" / "libnvrtc.so.13", "libraries");
  EXPECT_EQ(
      why.rfind((dir_ / "theirs").string() + ": it is owned by uid 65534, not by this user", 0), 0u)
      << why;
  EXPECT_NE(why.find("sudo chown 0 " + (dir_ / "theirs").string()), std::string::npos) << why;
}

TEST_F(TrustTest, PluginsInAnUnsafeFolderOrWithAnUnsafeLibraryAreRejected) {
  const fs::path good = fs::path(ARCHFIT_TEST_PLUGIN_DIR) / "good";
  const fs::path open_folder = dir_ / "open";
  const fs::path open_library = dir_ / "library";
  for (const fs::path& copy : {open_folder, open_library}) {
    fs::create_directories(copy / "good");
    for (const auto& file : fs::directory_iterator(good))
      fs::copy_file(file.path(), copy / "good" / file.path().filename());
  }
  ::chmod(open_folder.c_str(), 01777);
  ::chmod((open_library / "good" / "libtest_good.so").c_str(), 0666);
  archfit::plugin::PluginSearch search;
  search.paths = {open_folder, open_library};
  search.environment = false;
  search.install_dir = false;
  const auto set = archfit::plugin::load_plugins(search);
  EXPECT_TRUE(set.loaded.empty());
  ASSERT_EQ(set.rejected.size(), 2u);
  EXPECT_EQ(set.rejected[0].path, open_folder);
  EXPECT_NE(
      set.rejected[0].reason.find("refusing the folder: it is writable by others (mode 1777)"),
      std::string::npos)
      << set.rejected[0].reason;
  EXPECT_NE(set.rejected[1].reason.find("refusing " +
                                        (open_library / "good" / "libtest_good.so").string() +
                                        ": it is writable by others (mode 0666)"),
            std::string::npos)
      << set.rejected[1].reason;
  EXPECT_EQ(set.searched.size(), 1u);  // the unsafe folder is not searched
}

// Found in issue 24: the search folder was judged, but not the plugin's own
// subfolder, nor the folder its manifest's `library: ../../x.so` leads to.
TEST_F(TrustTest, APluginWhoseSubfolderOrLibraryFolderAnyoneCanWriteToIsRejected) {
  const fs::path good = fs::path(ARCHFIT_TEST_PLUGIN_DIR) / "good";
  const fs::path plugins = dir_ / "plugins";
  fs::create_directories(plugins / "good");
  for (const auto& file : fs::directory_iterator(good))
    fs::copy_file(file.path(), plugins / "good" / file.path().filename());
  ::chmod((plugins / "good").c_str(), 0777);

  const fs::path elsewhere = dir_ / "plugins2";
  const fs::path open = dir_ / "open";
  fs::create_directories(elsewhere / "far");
  fs::create_directories(open);
  ::chmod(open.c_str(), 0777);
  fs::copy_file(good / "libtest_good.so", open / "libtest_good.so");
  std::ofstream(elsewhere / "far" / "good.archfit-plugin.yaml")
      << "schema: archfit.plugin/1\nname: good\nlibrary: ../../open/libtest_good.so\nabi: 1\n";

  archfit::plugin::PluginSearch search;
  search.paths = {plugins, elsewhere};
  search.environment = false;
  search.install_dir = false;
  const auto set = archfit::plugin::load_plugins(search);
  EXPECT_TRUE(set.loaded.empty());
  ASSERT_EQ(set.rejected.size(), 2u);
  EXPECT_NE(set.rejected[0].reason.find((plugins / "good").string() +
                                        ": it is writable by others (mode 0777)"),
            std::string::npos)
      << set.rejected[0].reason;
  EXPECT_NE(set.rejected[1].reason.find(open.string() + ": it is writable by others (mode 0777)"),
            std::string::npos)
      << set.rejected[1].reason;
  // Made owner-only, both load.
  ::chmod((plugins / "good").c_str(), 0755);
  ::chmod(open.c_str(), 0755);
  search.paths = {plugins};
  EXPECT_EQ(archfit::plugin::load_plugins(search).loaded.size(), 1u);
  search.paths = {elsewhere};
  EXPECT_EQ(archfit::plugin::load_plugins(search).loaded.size(), 1u);
}

// In a setuid process the environment's plugin path is ignored. The helper
// is made setuid to another user (root can do that here; elsewhere skipped).
TEST_F(TrustTest, ASetuidProcessIgnoresThePluginPathFromItsEnvironment) {
  if (::geteuid() != 0) GTEST_SKIP() << "making a setuid helper needs root";
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  // A setuid process cannot read its own /proc/self/environ, so ASan never
  // sees ASAN_OPTIONS there, and LeakSanitizer then dies at exit.
  GTEST_SKIP() << "an ASan build cannot run a setuid helper (LeakSanitizer)";
#endif
#endif
  const fs::path helper = dir_ / "trust_probe";
  fs::copy_file(ARCHFIT_TRUST_PROBE, helper);
  const fs::path plugins = dir_ / "plugins";
  fs::create_directories(plugins);
  const auto run = [&](bool setuid) {
    ASSERT_EQ(::chown(helper.c_str(), setuid ? kNobody : 0, 0), 0);
    ASSERT_EQ(::chmod(helper.c_str(), setuid ? 04755 : 0755), 0);
    const std::string command =
        "ARCHFIT_PLUGIN_PATH='" + plugins.string() + "' '" + helper.string() + "' 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::array<char, 4096> buffer{};
    std::string out;
    for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;)
      out.append(buffer.data(), n);
    const int status = ::pclose(pipe);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
    if (setuid) {
      EXPECT_NE(out.find("ARCHFIT_PLUGIN_PATH: (ignored)"), std::string::npos) << out;
      EXPECT_EQ(out.find("searched: "), std::string::npos) << out;
    } else {
      EXPECT_NE(out.find("ARCHFIT_PLUGIN_PATH: " + plugins.string()), std::string::npos) << out;
      EXPECT_NE(out.find("searched: " + plugins.string()), std::string::npos) << out;
    }
  };
  run(false);
  run(true);
}

}  // namespace
