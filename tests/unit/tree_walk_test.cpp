// The walk under `archfit scan DIR` and `archfit check --site-packages DIR`
// (binary/tree_scan.hpp): it never leaves the directory named, visits each
// file once, and passes over pseudo-filesystems and special files (issue 24).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "binary/scan_json.hpp"
#include "binary/tree_scan.hpp"

namespace fs = std::filesystem;
using archfit::binary::FileList;
using archfit::binary::list_files;
using archfit::binary::ScanProgress;

namespace {

const fs::path kFixtures = ARCHFIT_FIXTURE_DIR;

class TreeWalk : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kFixtures / "sm_86_sm_89.so")) GTEST_SKIP() << "nvcc fixtures are not built";
    top_ = fs::temp_directory_path() / ("archfit_walk_" + std::to_string(::getpid()));
    fs::remove_all(top_);
    root_ = top_ / "venv";
    outside_ = top_ / "elsewhere";
    fs::create_directories(root_ / "pkg");
    fs::create_directories(outside_ / "lib");
    fs::copy_file(kFixtures / "sm_86_sm_89.so", root_ / "pkg" / "_C.so");
    fs::copy_file(kFixtures / "sm_86_sm_89.so", outside_ / "lib" / "libforeign.so");
  }
  void TearDown() override {
    if (!top_.empty()) fs::remove_all(top_);
  }

  static std::vector<std::string> relative_files(const FileList& list, const fs::path& base) {
    std::vector<std::string> names;
    for (const auto& file : list.files) names.push_back(file.lexically_relative(base).string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path top_, root_, outside_;
};

}  // namespace

// Found in issue 24: a folder holding a link to / was walked through the
// whole file system, for minutes, printing nothing.
TEST_F(TreeWalk, ALinkToTheFileSystemRootIsNotFollowed) {
  fs::create_directory_symlink("/", root_ / "pkg" / "everything");
  const auto started = std::chrono::steady_clock::now();
  const FileList list = list_files({root_});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(relative_files(list, root_), (std::vector<std::string>{"pkg/_C.so"}));
  ASSERT_EQ(list.skipped.size(), 1u);
  EXPECT_EQ(list.skipped[0].path, (root_ / "pkg" / "everything").string());
  EXPECT_EQ(list.skipped[0].reason,
            "a symbolic link to /, outside " + fs::canonical(root_).string());
  EXPECT_LT(seconds, 5.0) << "the walk left the directory";
}

// Found in issue 24: a link inside site-packages to a folder outside it
// listed that folder's libraries as the environment's components.
TEST_F(TreeWalk, ALinkToADirectoryOutsideTheRootIsReportedNotWalked) {
  fs::create_directory_symlink(outside_ / "lib", root_ / "pkg" / "lib");
  const FileList list = list_files({root_});
  EXPECT_EQ(relative_files(list, root_), (std::vector<std::string>{"pkg/_C.so"}));
  ASSERT_EQ(list.skipped.size(), 1u);
  EXPECT_NE(list.skipped[0].reason.find("outside"), std::string::npos);
  // Named, the same folder is scanned: leaving a tree is the user's call.
  const FileList named = list_files({outside_ / "lib"});
  EXPECT_EQ(named.files.size(), 1u);
}

// Debian's python3-torch ships torch/lib/libc10.so as a link to
// /usr/lib/x86_64-linux-gnu/libc10.so.1.13: a file link leads to what the
// environment loads, wherever it is, and reading a file cannot run away.
TEST_F(TreeWalk, ALinkToAFileOutsideTheRootIsFollowed) {
  fs::create_symlink(outside_ / "lib" / "libforeign.so", root_ / "pkg" / "libforeign.so");
  const FileList list = list_files({root_});
  EXPECT_EQ(relative_files(list, root_),
            (std::vector<std::string>{"pkg/_C.so", "pkg/libforeign.so"}));
  EXPECT_TRUE(list.skipped.empty());
}

// venv/lib64 -> lib: a link that stays inside is followed, and what it
// aliases is read once.
TEST_F(TreeWalk, ALinkInsideTheRootIsFollowedAndItsTargetReadOnce) {
  fs::create_directory_symlink("pkg", root_ / "alias");
  fs::create_directory(root_ / "real");
  fs::copy_file(kFixtures / "sm_86_sm_89.so", root_ / "real" / "_D.so");
  fs::create_directory_symlink(root_ / "real", root_ / "via_absolute");
  const FileList list = list_files({root_});
  EXPECT_EQ(relative_files(list, root_), (std::vector<std::string>{"pkg/_C.so", "real/_D.so"}));
  EXPECT_TRUE(list.skipped.empty());
}

// The directory named may itself be a link (a venv on another disk): the
// walk's bounds are where it resolves to.
TEST_F(TreeWalk, ARootNamedThroughALinkIsWalkedWhereItResolves) {
  fs::create_directory_symlink(root_, top_ / "venv-link");
  fs::create_directory_symlink(root_ / "pkg", root_ / "lib64");
  const FileList list = list_files({top_ / "venv-link"});
  EXPECT_EQ(relative_files(list, top_ / "venv-link"), (std::vector<std::string>{"pkg/_C.so"}));
  EXPECT_TRUE(list.skipped.empty());
}

// Found in issue 24: `archfit scan /proc/self` never ended (/proc/<pid>/root
// leads back to /).
TEST_F(TreeWalk, APseudoFilesystemNamedIsAProblemNotAWalk) {
  if (!fs::exists("/proc/self/status")) GTEST_SKIP() << "no /proc here";
  const auto started = std::chrono::steady_clock::now();
  const FileList list = list_files({"/proc/self"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 5.0);
  EXPECT_TRUE(list.files.empty());
  ASSERT_EQ(list.unreadable.size(), 1u);
  EXPECT_EQ(list.unreadable[0].problems.at(0).message,
            "not walked: it is on proc, a kernel pseudo-filesystem that holds no libraries");
}

// A FIFO in a tree would block the first reader that opened it: passed over.
TEST_F(TreeWalk, FifosAndSocketsInATreeArePassedOver) {
  ASSERT_EQ(::mkfifo((root_ / "pkg" / "pipe").c_str(), 0600), 0);
  const FileList list = list_files({root_});
  EXPECT_EQ(relative_files(list, root_), (std::vector<std::string>{"pkg/_C.so"}));
}

// A walk that has found nothing yet still reports progress.
TEST_F(TreeWalk, TheWalkReportsEachDirectoryItLists) {
  for (int i = 0; i < 5; ++i)
    fs::create_directories(root_ / ("empty" + std::to_string(i)) / "deeper");
  std::vector<size_t> directories;
  bool always_walking = true;
  const FileList list = list_files({root_}, {}, [&](const ScanProgress& progress) {
    always_walking = always_walking && progress.walking;
    directories.push_back(progress.directories);
  });
  EXPECT_TRUE(always_walking);
  EXPECT_EQ(directories.size(), list.directories.size());
  EXPECT_EQ(directories.back(), list.directories.size());
  EXPECT_EQ(list.directories.size(), 12u);  // venv, pkg, and five empty/deeper pairs
}

// The JSON of a scan says what was not followed, and a name that is not
// UTF-8 travels as its exact bytes too (issue 24).
TEST_F(TreeWalk, TheScanDocumentListsWhatWasNotFollowedAndExactPathBytes) {
  fs::create_directory_symlink("/", root_ / "pkg" / "everything");
  const std::string odd_name = std::string("lib\x1b[2J\xff") + ".so";
  fs::copy_file(kFixtures / "sm_86_sm_89.so", root_ / "pkg" / odd_name);
  const auto scan = archfit::binary::scan_tree({root_});
  const nlohmann::json document = archfit::binary::scan_document(scan.files, scan.skipped);
  ASSERT_EQ(document["skipped"].size(), 1u);
  EXPECT_EQ(document["skipped"][0]["path"], (root_ / "pkg" / "everything").string());
  EXPECT_FALSE(document["skipped"][0].contains("path_bytes"));  // plain UTF-8
  bool found = false;
  for (const auto& file : document["files"]) {
    const std::string path = file["path"];
    if (path.find("lib\x1b[2J") == std::string::npos) {
      EXPECT_FALSE(file.contains("path_bytes")) << path;
      continue;
    }
    found = true;
    // base64 of the exact bytes; the text itself has U+FFFD where 0xff was
    // once dumped, but here it is still the raw string.
    ASSERT_TRUE(file.contains("path_bytes"));
    const std::string full = (root_ / "pkg" / odd_name).string();
    EXPECT_EQ(file["path_bytes"].get<std::string>().size(), (full.size() + 2) / 3 * 4);
    const std::string dumped = file.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    EXPECT_NE(dumped.find("\\u001b[2J\xef\xbf\xbd.so"), std::string::npos) << dumped;
  }
  EXPECT_TRUE(found);
}

// Found in issue 34: a hard-linked copy of torch's library in a package
// whose folder sorts first hid torch's own copy, and with it the PyTorch
// stack and its fix. Each name that is not a symbolic link is judged; the
// file is read once.
TEST_F(TreeWalk, AHardLinkIsReadOnceAndJudgedUnderEachName) {
  fs::create_directories(root_ / "aaa_copy");
  fs::create_hard_link(root_ / "pkg" / "_C.so", root_ / "aaa_copy" / "_C.so");
  fs::create_symlink("_C.so", root_ / "pkg" / "_C_alias.so");
  const FileList list = list_files({root_});
  EXPECT_EQ(relative_files(list, root_), (std::vector<std::string>{"aaa_copy/_C.so"}));
  ASSERT_EQ(list.hard_links.size(), 1u) << "the link by name is an alias, not another owner";
  EXPECT_EQ(list.hard_links[0].path, (root_ / "pkg" / "_C.so").string());
  EXPECT_EQ(list.hard_links[0].same_as, 0u);

  const auto scan = archfit::binary::scan_tree({root_});
  ASSERT_EQ(scan.files.size(), 2u);
  EXPECT_EQ(scan.hard_links, 1u);
  EXPECT_EQ(scan.files[0].path, (root_ / "aaa_copy" / "_C.so").string());
  EXPECT_EQ(scan.files[1].path, (root_ / "pkg" / "_C.so").string());
  ASSERT_FALSE(scan.files[0].images.empty());
  EXPECT_EQ(scan.files[1].images.size(), scan.files[0].images.size());
  EXPECT_EQ(scan.bytes, scan.files[0].file_size) << "read once";
  EXPECT_EQ(scan.stamps[1], archfit::binary::FileStamp{}) << "a second name is never kept apart";
}

namespace {

// Makes and removes folders whose full path is longer than PATH_MAX, one
// relative step at a time (no call may name the whole path).
class DeepFolder {
 public:
  DeepFolder(const fs::path& top, size_t depth) : top_(top), depth_(depth) {
    const fs::path before = fs::current_path();
    fs::current_path(top_);
    for (size_t i = 0; i < depth_; ++i) {
      fs::create_directory(step_name());
      fs::current_path(step_name());
    }
    fs::copy_file(kFixtures / "sm_86_sm_89.so", "libdeep.so");
    fs::current_path(before);
  }
  ~DeepFolder() {
    const fs::path before = fs::current_path();
    fs::current_path(top_);
    for (size_t i = 0; i < depth_; ++i) fs::current_path(step_name());
    ::unlink("libdeep.so");
    for (size_t i = 0; i < depth_; ++i) {
      fs::current_path("..");
      ::rmdir(step_name().c_str());
    }
    fs::current_path(before);
  }
  static std::string step_name() { return std::string(200, 'd'); }

 private:
  fs::path top_;
  size_t depth_;
};

}  // namespace

// Found in issue 34: a failing library at a path over 4,096 characters was
// passed over without a word, so the check said "fits". It is reported.
TEST_F(TreeWalk, AFileDeeperThanPathMaxIsReportedNotPassedOver) {
  const DeepFolder deep(root_, 25);  // 25 × 201 bytes: over 4,096
  const auto scan = archfit::binary::scan_tree({root_});
  const auto reported = std::find_if(scan.files.begin(), scan.files.end(), [](const auto& file) {
    return file.unreadable && !file.problems.empty() &&
           file.problems[0].message.find("PATH_MAX") != std::string::npos;
  });
  ASSERT_NE(reported, scan.files.end()) << "nothing said of the deep folder";
  EXPECT_GT(reported->path.size(), 4000u);
  EXPECT_NE(reported->problems[0].message.find("was not read"), std::string::npos);
}
