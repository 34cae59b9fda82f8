// plugin/: manifests read before loading, the ABI negotiated, each way a
// plugin can be bad rejected with its path and reason while the others
// load, nothing of a plugin ever mapped in this process, and a plugin that
// crashes, exits or hangs taking only its child process down. The plugins
// are purpose-built (tests/plugins).
#include "plugin/plugin_host.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "saved_env.hpp"

namespace fs = std::filesystem;
using namespace archfit::plugin;

namespace {

const fs::path kPlugins = ARCHFIT_TEST_PLUGIN_DIR;
const fs::path kFaulty = ARCHFIT_FAULTY_PLUGIN_DIR;

fs::path manifest(const std::string& name, const fs::path& dir = kPlugins) {
  return dir / name / (name + kManifestSuffix);
}

// The reason load_plugin refuses `name` with; "" when it loads.
std::string rejection(const fs::path& manifest_path, uint32_t low = 1, uint32_t high = 1,
                      std::chrono::milliseconds time_limit = kDefaultPluginTimeLimit) {
  try {
    load_plugin(manifest_path, low, high, time_limit);
  } catch (const PluginError& error) {
    return error.what();
  }
  return "";
}

// True when this process has no child left, not even a zombie.
bool no_children_left() {
  errno = 0;
  return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD;
}

bool mapped(const fs::path& library) {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find(library.filename().string()) != std::string::npos;
}

class ScratchDir {
 public:
  ScratchDir()
      : path_(fs::temp_directory_path() / ("archfit_plugins_" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() { fs::remove_all(path_); }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return path_ / name;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

TEST(PluginHost, AGoodPluginIsNegotiatedCopiedAndUnloaded) {
  const LoadedPlugin plugin = load_plugin(manifest("good"), 1, 1);
  EXPECT_EQ(plugin.name, "good");
  EXPECT_EQ(plugin.version, "1.2.3");
  EXPECT_EQ(plugin.abi, 1u);
  ASSERT_EQ(plugin.modules.size(), 1u);
  EXPECT_EQ(plugin.modules[0].name, "good.scale");
  EXPECT_EQ(plugin.modules[0].entry_points, std::vector<std::string>{"scale"});
  EXPECT_NE(plugin.modules[0].source.find("__global__ void scale"), std::string::npos);
  EXPECT_EQ(plugin.probe_json, R"({"plugin": "good", "answer": 42})");
  // Everything was copied, in a child: this process never mapped the library.
  EXPECT_FALSE(mapped(plugin.manifest.library)) << plugin.manifest.library;
  // A host offering a range that holds 1 gets 1.
  EXPECT_EQ(load_plugin(manifest("good"), 1, 3).abi, 1u);
}

TEST(PluginHost, NegotiationThatFailsIsRejectedWithTheReason) {
  EXPECT_NE(
      rejection(manifest("decline")).find("declined every plugin ABI this archfit speaks (1)"),
      std::string::npos);
  EXPECT_NE(
      rejection(manifest("far")).find("chose plugin ABI 7, outside the 1 this archfit offered"),
      std::string::npos);
  // The good plugin speaks only 1: a host offering 2–3 is declined.
  EXPECT_NE(rejection(manifest("good"), 2, 3)
                .find("its manifest says plugin ABI 1, this archfit "
                      "speaks 2–3"),
            std::string::npos);
  // A manifest for ABIs this archfit does not speak is refused before loading.
  EXPECT_NE(rejection(manifest("future")).find("its manifest says plugin ABI 2–3"),
            std::string::npos);
  EXPECT_FALSE(mapped(kPlugins / "future" / "libtest_future.so"));
}

TEST(PluginHost, EachWayAPluginCanBeBrokenIsNamed) {
  EXPECT_NE(rejection(manifest("no_entry")).find("exports no archfit_plugin_negotiate"),
            std::string::npos);
  EXPECT_NE(rejection(manifest("throwing"))
                .find("it threw from its entry point: the plugin's own start-up failed"),
            std::string::npos);
  EXPECT_NE(rejection(manifest("misnamed"))
                .find("it reports the name \"someone_else\", its manifest says \"misnamed\""),
            std::string::npos);
  EXPECT_NE(rejection(manifest("no_entries"))
                .find("module 0 (no_entries.scale) names no entry "
                      "points"),
            std::string::npos);
  const std::string corrupted = rejection(manifest("corrupted"));
  EXPECT_NE(corrupted.find("libtest_corrupted.so cannot be loaded"), std::string::npos)
      << corrupted;
  // The loader's own words, not an errno.
  EXPECT_NE(corrupted.find("ELF"), std::string::npos) << corrupted;
}

TEST(PluginHost, ABadManifestIsRejectedBeforeAnythingLoads) {
  ScratchDir dir;
  const auto reason = [&](const std::string& text) {
    return rejection(dir.write("x.archfit-plugin.yaml", text));
  };
  EXPECT_NE(reason("schema: [unclosed\n").find("not YAML (line"), std::string::npos);
  EXPECT_NE(reason("- a list\n").find("not a YAML mapping"), std::string::npos);
  EXPECT_NE(reason("schema: archfit.plugin/2\nname: x\nlibrary: l.so\nabi: 1\n")
                .find("schema is \"archfit.plugin/2\""),
            std::string::npos);
  EXPECT_NE(reason("schema: archfit.plugin/1\nlibrary: l.so\nabi: 1\n").find("has no `name`"),
            std::string::npos);
  EXPECT_NE(reason("schema: archfit.plugin/1\nname: x\nabi: 1\n").find("has no `library`"),
            std::string::npos);
  EXPECT_NE(reason("schema: archfit.plugin/1\nname: x\nlibrary: /abs/l.so\nabi: 1\n")
                .find("relative to the manifest"),
            std::string::npos);
  EXPECT_NE(reason("schema: archfit.plugin/1\nname: x\nlibrary: l.so\nabi: one\n")
                .find("`abi` must be a version number"),
            std::string::npos);
  EXPECT_NE(reason("schema: archfit.plugin/1\nname: x y\nlibrary: l.so\nabi: 1\n")
                .find("is not 1 to 100 letters"),
            std::string::npos);
  EXPECT_NE(reason("schema: archfit.plugin/1\nname: x\nlibrary: missing.so\nabi: 1\n")
                .find("missing.so does not exist"),
            std::string::npos);
  EXPECT_NE(rejection(dir.path() / "absent.archfit-plugin.yaml").find("cannot be read"),
            std::string::npos);
}

TEST(PluginHost, TheSearchLoadsWhatItCanAndRejectsTheRestWithPaths) {
  const PluginEnvironment environment =
      plugin_environment((kPlugins.string() + ":/no/such/dir").c_str(), nullptr);
  PluginSearch search;
  search.install_dir = false;
  const PluginSet set = load_plugins(search, environment);
  ASSERT_EQ(set.searched.size(), 1u);  // the directory that exists, once
  ASSERT_EQ(set.loaded.size(), 1u);
  EXPECT_EQ(set.loaded[0].name, "good");
  std::map<std::string, std::string> reasons;
  for (const auto& rejected : set.rejected)
    reasons[rejected.path.parent_path().filename().string()] = rejected.reason;
  for (const char* bad :
       {"decline", "far", "misnamed", "no_entries", "throwing", "no_entry", "future", "corrupted"})
    EXPECT_EQ(reasons.count(bad), 1u) << bad;
  EXPECT_EQ(set.rejected.size(), 8u);
  // The same directory given by the host too: searched once, nothing twice.
  search.paths = {kPlugins};
  EXPECT_EQ(load_plugins(search, environment).searched.size(), 1u);
  // A search that leaves the environment out does not search its folders.
  search.paths = {};
  search.environment = false;
  EXPECT_TRUE(load_plugins(search, environment).searched.empty());
}

TEST(PluginHost, ASecondPluginOfTheSameNameIsRejectedNamingTheFirst) {
  ScratchDir dir;
  fs::create_directories(dir.path() / "copy");
  fs::copy_file(kPlugins / "good" / "libtest_good.so", dir.path() / "copy" / "libtest_good.so");
  std::ofstream(dir.path() / "copy" / "good.archfit-plugin.yaml")
      << "schema: archfit.plugin/1\nname: good\nlibrary: libtest_good.so\nabi: 1\n";
  PluginSearch search;
  search.environment = search.install_dir = false;
  search.paths = {kPlugins / "good", dir.path()};
  const PluginSet set = load_plugins(search);
  ASSERT_EQ(set.loaded.size(), 1u);
  ASSERT_EQ(set.rejected.size(), 1u);
  EXPECT_NE(set.rejected[0].reason.find("already loaded from " + manifest("good").string()),
            std::string::npos)
      << set.rejected[0].reason;
}

// Row 5 of issue 24: a plugin that crashes, exits or hangs in its
// constructor, its negotiation or its probe is rejected naming how, and
// this process, which never loads it, carries on.
TEST(PluginHostIsolation, APluginThatCrashesExitsOrHangsIsRejectedNamingHow) {
  const std::chrono::seconds limit(1);
  EXPECT_EQ(rejection(manifest("segv_on_load", kFaulty), 1, 1, limit),
            "it crashed loading (signal 11, SIGSEGV)");
  EXPECT_EQ(rejection(manifest("abort_in_negotiate", kFaulty), 1, 1, limit),
            "it crashed loading (signal 6, SIGABRT)");
  EXPECT_EQ(rejection(manifest("exit_in_probe", kFaulty), 1, 1, limit),
            "it exited with status 3 while loading");
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(rejection(manifest("loop_in_probe", kFaulty), 1, 1, limit),
            "it did not finish loading within 1 s; killed");
  const auto waited = std::chrono::steady_clock::now() - started;
  EXPECT_GE(waited, limit);
  EXPECT_LT(waited, limit * 3) << "killed at the limit, not long after";
  EXPECT_TRUE(no_children_left()) << "every child is reaped, the killed one too";
  EXPECT_FALSE(mapped(kFaulty / "segv_on_load" / "libtest_segv_on_load.so"));
}

// Row 6: a probe must answer with a JSON object (archfit_plugin.h).
TEST(PluginHostIsolation, AProbeThatIsNotAJsonObjectRejectsThePlugin) {
  EXPECT_EQ(rejection(manifest("probe_not_json", kFaulty)),
            "its probe returned \"{not json\", which is not JSON (byte 3)");
}

TEST(PluginHostIsolation, TheOthersLoadOnUnderTheTimeLimitTheEnvironmentSets) {
  PluginSearch search;
  search.environment = search.install_dir = false;
  search.paths = {kFaulty, kPlugins / "good"};
  const PluginSet set = load_plugins(search, plugin_environment(nullptr, "1"));
  ASSERT_EQ(set.loaded.size(), 1u);
  EXPECT_EQ(set.loaded[0].name, "good");
  EXPECT_EQ(set.loaded[0].probe_json, R"({"plugin": "good", "answer": 42})");
  std::map<std::string, std::string> reasons;
  for (const auto& rejected : set.rejected)
    reasons[rejected.path.filename().string()] = rejected.reason;
  EXPECT_EQ(reasons.size(), 7u);
  EXPECT_EQ(reasons["loop_in_probe.archfit-plugin.yaml"],
            "it did not finish loading within 1 s; killed");
  EXPECT_EQ(reasons["segv_on_load.archfit-plugin.yaml"], "it crashed loading (signal 11, SIGSEGV)");
  EXPECT_TRUE(no_children_left());
}

TEST(PluginHostIsolation, TheTimeLimitIsTheEnvironmentsOrRefusedNamingIt) {
  EXPECT_EQ(plugin_environment(nullptr, nullptr).time_limit, std::nullopt);
  EXPECT_EQ(plugin_environment(nullptr, "").time_limit, std::nullopt);
  EXPECT_EQ(plugin_environment(nullptr, "2.5").time_limit, std::chrono::milliseconds(2500));
  EXPECT_EQ(plugin_environment(nullptr, "2.5").time_limit_problem, "");
  for (const char* bad : {"10s", "0", "-1", "nan", "1e9", " "}) {
    const PluginEnvironment environment = plugin_environment(nullptr, bad);
    EXPECT_EQ(environment.time_limit, std::nullopt) << bad;
    EXPECT_NE(environment.time_limit_problem.find(std::string("ARCHFIT_PLUGIN_TIMEOUT is \"") +
                                                  bad + "\""),
              std::string::npos)
        << bad;
  }
  // A bad value loads no plugin, each rejected saying why.
  PluginSearch search;
  search.environment = search.install_dir = false;
  search.paths = {kPlugins / "good"};
  const PluginSet set = load_plugins(search, plugin_environment(nullptr, "10s"));
  EXPECT_TRUE(set.loaded.empty());
  ASSERT_EQ(set.rejected.size(), 1u);
  EXPECT_EQ(set.rejected[0].reason,
            "not loaded: ARCHFIT_PLUGIN_TIMEOUT is \"10s\", not a number of seconds above 0 and "
            "up to 86400 (such as 30 or 2.5)");
  // A limit the host gives beats the environment's, even a malformed one.
  search.time_limit = std::chrono::seconds(5);
  EXPECT_EQ(load_plugins(search, plugin_environment(nullptr, "10s")).loaded.size(), 1u);
}

// Issue 34 row 5: a plugin that starts a daemon is rejected at once, not
// after the time limit; the daemon is killed before load_plugin returns,
// and it never held a file of this process's (here a pipe's write end not
// marked close-on-exec, as a host's sockets often are).
TEST(PluginHostIsolation, APluginThatStartsADaemonIsRejectedAndLeavesNothingRunning) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(rejection(manifest("daemon_in_probe", kFaulty), 1, 1, std::chrono::seconds(20)),
            "it left 1 process running after loading, killed: a plugin may not start processes "
            "that outlive its loading");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5))
      << "answered when the plugin's child ended, not at the time limit";
  ::close(ends[1]);
  // With this process's write end closed, no process holds another: the
  // read end sees the end of the pipe at once.
  pollfd hung_up{ends[0], POLLIN, 0};
  EXPECT_EQ(::poll(&hung_up, 1, 2000), 1);
  char byte = 0;
  EXPECT_EQ(::read(ends[0], &byte, 1), 0) << "some process still holds the pipe";
  ::close(ends[0]);
  EXPECT_TRUE(no_children_left());
}

// Issue 34 row 6: a plugin that writes without end is killed at 1 MiB and
// rejected; its messages never flood this process's stderr.
TEST(PluginHostIsolation, APluginThatFloodsStderrIsKilledAndRejected) {
  testing::internal::CaptureStderr();
  const std::string reason = rejection(manifest("flood_in_probe", kFaulty));
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_EQ(reason, "it wrote more than 1024 KiB to its stdout and stderr while loading; killed");
  EXPECT_LE(printed.size(), size_t{8} << 10) << "the first 4 KiB, and a line saying how much more";
  EXPECT_NE(printed.find("more bytes the plugin of "), std::string::npos);
}

// Issue 34 row 7: a host whose other threads load and unload libraries and
// allocate while plugins load (Python's, a check's scan) gets every good
// plugin loaded: nothing is forked from this process, so no lock another
// thread holds is copied into a child.
TEST(PluginHostIsolation, GoodPluginsLoadWhileOtherThreadsLoadLibrariesAndAllocate) {
  const fs::path library = kPlugins / "no_entry" / "libtest_no_entry.so";
  std::atomic<bool> stop{false};
  std::atomic<long> busy_rounds{0};
  std::vector<std::thread> busy;
  for (int thread = 0; thread < 3; ++thread) {
    busy.emplace_back([&] {
      while (!stop) {
        if (void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL)) ::dlclose(handle);
        std::vector<std::string> garbage(256, std::string(512, 'x'));
        ++busy_rounds;
      }
    });
  }
  std::atomic<int> loaded{0};
  std::vector<std::string> reasons;
  std::mutex reasons_lock;
  std::vector<std::thread> loaders;
  for (int thread = 0; thread < 2; ++thread) {
    loaders.emplace_back([&] {
      for (int round = 0; round < 20; ++round) {
        const std::string reason = rejection(manifest("good"), 1, 1, std::chrono::seconds(10));
        if (reason.empty()) {
          ++loaded;
        } else {
          std::lock_guard hold(reasons_lock);
          reasons.push_back(reason);
        }
      }
    });
  }
  for (auto& loader : loaders) loader.join();
  stop = true;
  for (auto& thread : busy) thread.join();
  EXPECT_EQ(loaded, 40);
  EXPECT_TRUE(reasons.empty()) << reasons.front();
  EXPECT_GT(busy_rounds, 40) << "the other threads were busy meanwhile";
}
