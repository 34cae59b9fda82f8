// A kernel cache shared by a fleet (docs/fleet.md, "Shared kernel cache"):
// `archfit jit bundle` run once, on a build machine, with ARCHFIT_CACHE_DIR
// on shared storage, compiles each (kernel, arch) into it; every node reads it
// as a read-only directory (ARCHFIT_CACHE_READONLY_DIRS) under a primary of
// its own. A node of any bundled arch loads the module from the shared copy
// without compiling and without writing there; a node of an arch the bundle
// lacks compiles into its own primary. Nodes are simulated by the test-only
// libcuda (tests/fakes/); the compiles are real NVRTC.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>

#include "jit/fatbin_bundle.hpp"
#include "jit/jit_runtime.hpp"
#include "jit/kernel_module.hpp"
#include "saved_env.hpp"

namespace fs = std::filesystem;
using archfit::jit::JitRuntime;
using archfit::jit::JitSettings;

namespace {

size_t files_under(const fs::path& dir) {
  size_t count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) count += entry.is_regular_file();
  return count;
}

class SharedKernelCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("archfit_shared_cache_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ifstream in(fs::path(ARCHFIT_KERNELS_DIR) / "rmsnorm.cu");
    std::ostringstream text;
    text << in.rdbuf();
    source_ = text.str();
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_MODULE_LOAD");
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_INIT");
    archfit::testing::set_env("ARCHFIT_FAKE_CUDA_VERSION", "13000");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A node: the fake driver with one GPU of `cc`, a primary of its own and
  // the shared directory read-only.
  std::shared_ptr<JitRuntime> node(const std::string& name, const std::string& gpu) {
    archfit::testing::set_env("ARCHFIT_FAKE_CUDA_DEVICES", gpu.c_str());
    JitSettings settings;
    settings.libcuda = ARCHFIT_FAKE_CUDA;
    settings.cache.emplace();
    settings.cache->dir = dir_ / name;
    settings.cache->readonly_dirs = {shared()};
    settings.cache->on_warning = [](const std::string& warning) { ADD_FAILURE() << warning; };
    return std::make_shared<JitRuntime>(settings);
  }

  // The op as it registers itself: the source only, no prebuilt image.
  archfit::jit::KernelModuleSpec rmsnorm() const {
    archfit::jit::KernelModuleSpec spec;
    spec.name = "fleet.rmsnorm";
    spec.source = source_;
    spec.source_name = "rmsnorm.cu";
    spec.entry_points = {"rmsnorm_f32"};
    return spec;
  }

  fs::path shared() const { return dir_ / "shared"; }

  archfit::testing::SavedEnv saved_{"ARCHFIT_FAKE_CUDA_DEVICES", "ARCHFIT_FAKE_CUDA_INIT",
                                    "ARCHFIT_FAKE_CUDA_MODULE_LOAD", "ARCHFIT_FAKE_CUDA_VERSION"};
  fs::path dir_;
  std::string source_;
};

}  // namespace

TEST_F(SharedKernelCache, ABundleBuiltOnceServesEveryNodeOfItsArchsWithoutACompile) {
  if (archfit::jit::find_fatbinary({}).empty()) GTEST_SKIP() << "no fatbinary in the toolkit";
  // The bundle compiles each arch in the archfit command: built by `make
  // build`, not by the ThreadSanitizer stage, which builds only the test
  // binaries it runs (a dependency would build the whole command there).
  if (!fs::exists(ARCHFIT_CLI)) GTEST_SKIP() << "the archfit command is not built: " << ARCHFIT_CLI;
  // The build machine: one bundle, its compiles cached on the shared storage.
  archfit::jit::BundleRequest bundle;
  bundle.source = fs::path(ARCHFIT_KERNELS_DIR) / "rmsnorm.cu";
  bundle.archs = {"sm_89", "sm_120"};
  bundle.output = dir_ / "rmsnorm.fatbin";
  bundle.jobs = 2;
  bundle.compiler = ARCHFIT_CLI;  // each arch in an `archfit jit compile` of its own
  JitSettings build;
  build.cache.emplace();
  build.cache->dir = shared();
  try {
    const auto result = archfit::jit::build_bundle(bundle, build);
    ASSERT_EQ(result.images.size(), 2u);
    for (const auto& image : result.images) EXPECT_EQ(image.cache, "built") << image.arch;
  } catch (const archfit::jit::BundleError& error) {
    if (std::string(error.what()).find("NVRTC") != std::string::npos)
      GTEST_SKIP() << "no NVRTC to build the bundle with: " << error.what();
    throw;
  }
  const size_t shared_files = files_under(shared());

  for (const auto& [name, gpu, arch] :
       {std::tuple{"ada", "NVIDIA GeForce RTX 4090,8.9,1", "sm_89"},
        std::tuple{"blackwell", "NVIDIA GeForce RTX 5090,12.0,1", "sm_120"}}) {
    SCOPED_TRACE(name);
    const auto runtime = node(name, gpu);
    archfit::jit::KernelModule module(rmsnorm(), runtime);
    const auto report = module.load(0)->report();
    EXPECT_EQ(report.path, archfit::jit::JitPath::nvrtc);
    EXPECT_EQ(report.arch, arch);
    EXPECT_EQ(report.cache_source, "readonly");      // found on the shared storage
    EXPECT_EQ(runtime->cache().stats().builds, 0u);  // nothing compiled on the node
    EXPECT_EQ(runtime->cache().stats().readonly_hits, 1u);
  }
  // An arch the bundle lacks: compiled on the node, into its own primary.
  const auto hopper = node("hopper", "NVIDIA H100,9.0,1");
  archfit::jit::KernelModule module(rmsnorm(), hopper);
  EXPECT_EQ(module.load(0)->report().cache_source, "built");
  EXPECT_GT(files_under(dir_ / "hopper"), 0u);
  // No node wrote to the shared directory.
  EXPECT_EQ(files_under(shared()), shared_files);
}
