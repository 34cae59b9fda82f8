// session/: a Session reads the knowledge base once and keeps it for every
// flow it runs (issue 25). Shown with a copy of the knowledge base whose
// files are removed after the first read: a flow that read it again would
// fail. And it owns its jit runtime (kernel cache, NVRTC, libcuda): no other
// Session shares it, and a compile answered once is answered from it.
#include "session/session.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "jit/nvrtc/target_plan.hpp"
#include "saved_env.hpp"
#include "session/environment_settings.hpp"
#include "sys/read_file.hpp"
#include "sys/user_folders.hpp"

namespace fs = std::filesystem;
using archfit::session::read_fatbinary_search;
using archfit::session::read_jit_settings;
using archfit::session::Session;

namespace {

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kb_ = fs::temp_directory_path() / ("archfit_session_kb_" + std::to_string(::getpid()));
    fs::remove_all(kb_);
    fs::copy(ARCHFIT_KB_SOURCE_DIR, kb_, fs::copy_options::recursive);
  }
  void TearDown() override { fs::remove_all(kb_); }
  // Every YAML file gone but a gpus.yaml that does not parse: the folder
  // still resolves as a knowledge base, and reading it fails.
  void empty_the_knowledge_base() {
    for (const auto& entry : fs::directory_iterator(kb_)) fs::remove_all(entry.path());
    std::ofstream(kb_ / "gpus.yaml") << "gpus: [not yaml\n";
  }
  fs::path kb_;
};

TEST_F(SessionTest, TheKnowledgeBaseIsReadOnceAndKeptPerFolder) {
  Session session;
  const auto first = session.knowledge_base(kb_).get();
  EXPECT_EQ(session.knowledge_base(kb_).get(), first);
  // A check needs less of it: the whole one already held serves it.
  EXPECT_EQ(session.knowledge_base(kb_, archfit::kb::KbParts::without_error_signatures).get(),
            first);
  EXPECT_EQ(session.resources().knowledge_base.valid(), true);
  EXPECT_NE(session.knowledge_base(fs::path(ARCHFIT_KB_SOURCE_DIR)).get(), first);
  EXPECT_THROW(session.knowledge_base(kb_ / "missing").get(), archfit::kb::KbError);
}

TEST_F(SessionTest, ExplainAndCheckUseTheKnowledgeBaseTheSessionHolds) {
  Session session({.threads = 1, .libcuda = kb_ / "no-driver-here.so", .kb_dir = kb_});
  archfit::diagnose::ExplainRequest request;
  const std::string text = "CUDA error: no kernel image is available for execution on the device";
  request.text = text;
  EXPECT_TRUE(session.explain(request).recognised());
  empty_the_knowledge_base();

  // Read again, the folder has nothing; the session's copy answers.
  request.check.emplace();
  request.check->gpus = {"RTX 5090"};
  request.check->driver = "570.86";
  const auto diagnosis = session.explain(request);
  EXPECT_TRUE(diagnosis.recognised());
  ASSERT_TRUE(diagnosis.environment);
  EXPECT_NE(diagnosis.environment->devices.front().find("RTX 5090"), std::string::npos);

  archfit::check::CheckRequest options = *request.check;
  options.probe_only_when_nothing_to_scan = true;
  EXPECT_EQ(session.check(options).devices.front().cc.sm(), 120u);
  // Alone, with the folder read again, the check cannot run; a new session
  // reads it again too.
  EXPECT_THROW(
      archfit::check::run_check(
          options, archfit::check::CheckResources{archfit::kb::find_and_load_knowledge_base_async(
                       kb_, archfit::kb::KbParts::without_error_signatures)}),
      archfit::check::CheckError);
  EXPECT_THROW(Session({.kb_dir = kb_}).explain(request), archfit::diagnose::ExplainError);
}

// The one reader of the environment (issue 32): the knowledge base's folder
// and the plugin settings come from the Session, which reads the variables
// at each flow, so a host that changes one between two calls is heard; the
// kb and plugin modules read none themselves.
TEST_F(SessionTest, TheKnowledgeBaseFolderAndPluginSettingsAreReadFromTheEnvironmentAtEachFlow) {
  archfit::testing::SavedEnv saved(
      {"ARCHFIT_KB_DIR", "ARCHFIT_PLUGIN_PATH", "ARCHFIT_PLUGIN_TIMEOUT"});
  archfit::testing::set_env("ARCHFIT_KB_DIR", kb_.string().c_str());
  // An empty entry between two separators (':' here, ';' on Windows) is passed over.
  const std::string separator(1, archfit::sys::kPathListSeparator);
  archfit::testing::set_env("ARCHFIT_PLUGIN_PATH",
                            (kb_.string() + separator + separator + "/no/such/dir").c_str());
  archfit::testing::set_env("ARCHFIT_PLUGIN_TIMEOUT", "2.5");
  const auto environment = archfit::session::read_environment_settings();
  EXPECT_EQ(environment.kb_dir, kb_);
  EXPECT_EQ(environment.plugins.paths, (std::vector<fs::path>{kb_, "/no/such/dir"}));
  EXPECT_EQ(environment.plugins.time_limit, std::chrono::milliseconds(2500));

  Session session;
  const auto from_environment = session.knowledge_base().get();
  empty_the_knowledge_base();
  // Kept per folder: the variable's folder, read once.
  EXPECT_EQ(session.knowledge_base().get(), from_environment);
  // The variable changed: the next flow hears it, and a folder that is not
  // a knowledge base is named with the variable.
  archfit::testing::set_env("ARCHFIT_KB_DIR", (kb_ / "missing").string().c_str());
  try {
    session.knowledge_base().get();
    ADD_FAILURE() << "a missing folder was taken";
  } catch (const archfit::kb::KbError& error) {
    EXPECT_NE(std::string(error.what()).find("ARCHFIT_KB_DIR=" + (kb_ / "missing").string()),
              std::string::npos)
        << error.what();
  }
  // A folder the host names beats the variable.
  EXPECT_NO_THROW(session.knowledge_base(fs::path(ARCHFIT_KB_SOURCE_DIR)).get());

  // The plugin search gets the variable's folders, and its time limit; a
  // malformed limit refuses each plugin, naming the variable. (The knowledge
  // base's copy holds no plugin: its folder is searched, nothing is found.)
  archfit::plugin::PluginSearch search;
  search.install_dir = false;
  EXPECT_EQ(session.plugins(search).searched, std::vector<fs::path>{fs::canonical(kb_)});
  archfit::testing::unset_env("ARCHFIT_PLUGIN_PATH");
  EXPECT_TRUE(session.plugins(search).searched.empty());
  archfit::testing::set_env("ARCHFIT_PLUGIN_TIMEOUT", "soon");
  EXPECT_NE(archfit::session::read_environment_settings().plugins.time_limit_problem.find(
                "ARCHFIT_PLUGIN_TIMEOUT is \"soon\""),
            std::string::npos);
  EXPECT_EQ(session.resources().plugin_environment.time_limit_problem,
            archfit::session::read_environment_settings().plugins.time_limit_problem);
}

#ifdef _WIN32
// Windows: the cache under %LOCALAPPDATA%, lists split at ';', NVRTC's
// folders from PATH, and no default toolkit folder.
TEST(SessionEnvironment, TheKernelCacheSettingsAreReadFromTheEnvironment) {
  archfit::testing::SavedEnv saved{"ARCHFIT_CACHE_DIR", "LOCALAPPDATA",
                                   "ARCHFIT_CACHE_READONLY_DIRS", "ARCHFIT_CACHE_MAX_BYTES"};
  archfit::testing::set_env("LOCALAPPDATA", "C:\\Users\\someone\\AppData\\Local");
  archfit::testing::set_env("ARCHFIT_CACHE_DIR", "D:\\explicit");
  EXPECT_EQ(read_jit_settings().cache.value().dir, fs::path("D:\\explicit"));
  archfit::testing::unset_env("ARCHFIT_CACHE_DIR");
  EXPECT_EQ(read_jit_settings().cache.value().dir,
            fs::path("C:\\Users\\someone\\AppData\\Local\\archfit"));

  archfit::testing::set_env("ARCHFIT_CACHE_READONLY_DIRS", "D:\\fleet\\a;;D:\\fleet\\b;");
  archfit::testing::set_env("ARCHFIT_CACHE_MAX_BYTES", "64M");
  const auto options = read_jit_settings().cache.value();
  EXPECT_EQ(options.readonly_dirs, (std::vector<fs::path>{"D:\\fleet\\a", "D:\\fleet\\b"}));
  EXPECT_EQ(options.max_bytes, 64ull << 20);
}

TEST(SessionEnvironment, TheNvrtcSearchIsReadFromTheEnvironment) {
  archfit::testing::SavedEnv saved{"ARCHFIT_NVRTC", "CUDA_HOME", "CUDA_PATH", "PATH"};
  archfit::testing::set_env("ARCHFIT_NVRTC", "D:\\nvrtc\\nvrtc64_130_0.dll");
  archfit::testing::unset_env("CUDA_HOME");
  archfit::testing::set_env("CUDA_PATH", "D:\\CUDA\\v13.0");
  archfit::testing::set_env("PATH", "D:\\a;D:\\b");
  const auto search = read_jit_settings().nvrtc_search.value();
  EXPECT_EQ(search.archfit_nvrtc, "D:\\nvrtc\\nvrtc64_130_0.dll");
  EXPECT_EQ(search.cuda_home, "D:\\CUDA\\v13.0");
  EXPECT_EQ(search.ld_library_path, (std::vector<fs::path>{"D:\\a", "D:\\b"}));
  EXPECT_TRUE(search.default_toolkit.empty());
}
#else
TEST(SessionEnvironment, TheKernelCacheSettingsAreReadFromTheEnvironment) {
  archfit::testing::SavedEnv saved{"ARCHFIT_CACHE_DIR", "XDG_CACHE_HOME", "HOME",
                                   "ARCHFIT_CACHE_READONLY_DIRS", "ARCHFIT_CACHE_MAX_BYTES"};
  archfit::testing::set_env("HOME", "/home/someone");
  archfit::testing::set_env("XDG_CACHE_HOME", "/xdg");
  archfit::testing::set_env("ARCHFIT_CACHE_DIR", "/explicit");
  EXPECT_EQ(read_jit_settings().cache.value().dir, fs::path("/explicit"));
  archfit::testing::set_env("ARCHFIT_CACHE_DIR", "");
  EXPECT_EQ(read_jit_settings().cache.value().dir, fs::path("/xdg/archfit"));
  archfit::testing::set_env("XDG_CACHE_HOME", "relative");  // ignored, as the XDG spec says
  EXPECT_EQ(read_jit_settings().cache.value().dir, fs::path("/home/someone/.cache/archfit"));
  archfit::testing::unset_env("XDG_CACHE_HOME");
  EXPECT_EQ(read_jit_settings().cache.value().dir, fs::path("/home/someone/.cache/archfit"));

  archfit::testing::set_env("ARCHFIT_CACHE_READONLY_DIRS", "/fleet/a::/fleet/b:");
  archfit::testing::set_env("ARCHFIT_CACHE_MAX_BYTES", "64M");
  auto options = read_jit_settings().cache.value();
  EXPECT_EQ(options.readonly_dirs, (std::vector<fs::path>{"/fleet/a", "/fleet/b"}));
  EXPECT_EQ(options.max_bytes, 64ull << 20);
  EXPECT_TRUE(options.notes.empty());
  archfit::testing::set_env("ARCHFIT_CACHE_MAX_BYTES", "lots");
  options = read_jit_settings().cache.value();
  EXPECT_EQ(options.max_bytes, 1ull << 30);
  ASSERT_EQ(options.notes.size(), 1u);
  EXPECT_NE(options.notes[0].find("ARCHFIT_CACHE_MAX_BYTES=lots"), std::string::npos);
}

TEST(SessionEnvironment, TheNvrtcSearchIsReadFromTheEnvironment) {
  archfit::testing::SavedEnv saved{"ARCHFIT_NVRTC", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH"};
  archfit::testing::set_env("ARCHFIT_NVRTC", "/opt/nvrtc/libnvrtc.so.13");
  archfit::testing::unset_env("CUDA_HOME");
  archfit::testing::set_env("CUDA_PATH", "/opt/cuda");
  archfit::testing::set_env("LD_LIBRARY_PATH", "/a:/b");
  const auto search = read_jit_settings().nvrtc_search.value();
  EXPECT_EQ(search.archfit_nvrtc, "/opt/nvrtc/libnvrtc.so.13");
  EXPECT_EQ(search.cuda_home, "/opt/cuda");
  EXPECT_EQ(search.ld_library_path, (std::vector<fs::path>{"/a", "/b"}));
  EXPECT_EQ(search.default_toolkit, "/usr/local/cuda");
  EXPECT_FALSE(search.loader_dirs.empty());
}
#endif

TEST(SessionEnvironment, FatbinaryIsLookedForWhereTheEnvironmentSays) {
  archfit::testing::SavedEnv saved{"ARCHFIT_FATBINARY", "CUDA_HOME", "CUDA_PATH", "PATH"};
  archfit::testing::set_env("ARCHFIT_FATBINARY", "/opt/fb/fatbinary");
  archfit::testing::set_env("CUDA_HOME", "/opt/a");
  archfit::testing::set_env("CUDA_PATH", "/opt/b");
  archfit::testing::set_env("PATH", "/x:/y");
  const auto search = read_fatbinary_search();
  EXPECT_EQ(search.given, "/opt/fb/fatbinary");
  EXPECT_EQ(search.toolkits, (std::vector<fs::path>{"/opt/a", "/opt/b"}));
  EXPECT_EQ(search.path, "/x:/y");
  EXPECT_EQ(archfit::jit::find_fatbinary(search), "/opt/fb/fatbinary");
  archfit::testing::unset_env("ARCHFIT_FATBINARY");
  archfit::testing::unset_env("CUDA_HOME");
  archfit::testing::unset_env("CUDA_PATH");
  EXPECT_TRUE(read_fatbinary_search().given.empty());
  EXPECT_TRUE(read_fatbinary_search().toolkits.empty());
}

TEST(SessionJit, EachSessionOwnsAJitRuntimeMadeOnFirstUseFromItsSettings) {
  Session first({.threads = 1, .libcuda = "/opt/first/libcuda.so.1"});
  Session second;
  const auto runtime = first.jit();
  EXPECT_EQ(first.jit(), runtime);
  EXPECT_NE(second.jit(), runtime);
  EXPECT_EQ(runtime->settings().libcuda, fs::path("/opt/first/libcuda.so.1"));
  EXPECT_NE(&second.jit()->cache(), &runtime->cache());
  // Its libcuda is not there: the module flow says so, naming nothing else.
  try {
    archfit::jit::KernelModuleSpec spec;
    spec.name = "test.session";
    spec.source = "extern \"C\" __global__ void k() {}";
    spec.entry_points = {"k"};
    first.module(spec)->load(0);
    ADD_FAILURE() << "a module loaded through a libcuda that does not exist";
  } catch (const archfit::jit::JitError& error) {
    EXPECT_NE(std::string(error.what()).find("/opt/first/libcuda.so.1"), std::string::npos)
        << error.what();
  }
}

TEST(SessionJit, ACompileIsAnsweredByTheSessionsOwnCacheThenByTheDiskForTheNext) {
  const archfit::testing::SavedEnv saved{"ARCHFIT_CACHE_DIR"};
  const fs::path cache =
      fs::temp_directory_path() / ("archfit_session_jit_" + std::to_string(::getpid()));
  fs::remove_all(cache);
  archfit::testing::set_env("ARCHFIT_CACHE_DIR", cache.string().c_str());
  std::string problem;
  const auto source =
      archfit::sys::read_file(fs::path(ARCHFIT_KERNELS_DIR) / "rmsnorm.cu", &problem);
  ASSERT_TRUE(source) << problem;
  archfit::jit::CompileRequest request;
  request.source = *source;
  request.source_name = "rmsnorm.cu";
  request.target = "sm_120";
  Session session;
  try {
    EXPECT_EQ(session.compile(request).source, archfit::jit::CacheSource::built);
  } catch (const archfit::jit::NvrtcError& error) {
    fs::remove_all(cache);
    GTEST_SKIP() << "no NVRTC to compile with: " << error.what();
  }
  EXPECT_EQ(session.compile(request).source, archfit::jit::CacheSource::memory);
  EXPECT_EQ(Session().compile(request).source, archfit::jit::CacheSource::primary);
  request.target = "sm_35";  // NVRTC 12 and later know none before sm_50
  EXPECT_THROW(session.compile(request), archfit::jit::NoTargetError);
  fs::remove_all(cache);
}

}  // namespace
