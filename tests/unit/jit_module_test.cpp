// jit/kernel_module end to end against the test-only driver (tests/fakes/),
// which loads an image only where NVIDIA's rules say it runs, with the real
// NVRTC of the toolkit and a kernel cache in a scratch directory.
#include "jit/kernel_module.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "fixture_files.hpp"
#include "saved_env.hpp"

namespace fs = std::filesystem;
using archfit::jit::JitError;
using archfit::jit::JitPath;
using archfit::jit::JitRuntime;
using archfit::jit::KernelModule;
using archfit::jit::KernelModuleSpec;

namespace {

class JitModule : public archfit::testing::FixtureTest {
 protected:
  void SetUp() override {
    FixtureTest::SetUp();
    if (IsSkipped()) return;
    dir_ = fs::temp_directory_path() /
           ("archfit_jit_module_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    archfit::jit::JitSettings settings;
    settings.libcuda = ARCHFIT_FAKE_CUDA;
    settings.cache.emplace();
    settings.cache->dir = dir_ / "cache";
    settings.cache->on_warning = [](const std::string&) {};
    runtime_ = std::make_shared<JitRuntime>(settings);
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_MODULE_LOAD");
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_INIT");
    archfit::testing::set_env("ARCHFIT_FAKE_CUDA_VERSION", "13000");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void devices(const std::string& spec) {
    archfit::testing::set_env("ARCHFIT_FAKE_CUDA_DEVICES", spec.c_str());
  }

  // The fake libcuda and a cache of the test's own, as a Session would hold.
  std::shared_ptr<JitRuntime> runtime() { return runtime_; }

  // The bundled RMSNorm, with the nvcc fixture's sm_86/sm_89 images prebuilt.
  KernelModuleSpec rmsnorm(const char* prebuilt = nullptr) {
    KernelModuleSpec spec;
    spec.name = "test.rmsnorm";
    std::ifstream in(std::string(ARCHFIT_KERNELS_DIR) + "/rmsnorm.cu");
    std::ostringstream text;
    text << in.rdbuf();
    spec.source = text.str();
    spec.source_name = "rmsnorm.cu";
    spec.entry_points = {"rmsnorm_f32", "rmsnorm<float>"};
    if (prebuilt) {
      const auto bytes = archfit::testing::read_bytes(archfit::testing::kFixtureDir / prebuilt);
      spec.prebuilt.assign(reinterpret_cast<const std::byte*>(bytes.data()),
                           reinterpret_cast<const std::byte*>(bytes.data()) + bytes.size());
    }
    return spec;
  }

  archfit::testing::SavedEnv saved_{"ARCHFIT_FAKE_CUDA_DEVICES", "ARCHFIT_FAKE_CUDA_INIT",
                                    "ARCHFIT_FAKE_CUDA_MODULE_LOAD", "ARCHFIT_FAKE_CUDA_VERSION"};
  fs::path dir_;
  std::shared_ptr<JitRuntime> runtime_;
};

}  // namespace

TEST_F(JitModule, APrebuiltImageThatRunsIsLoadedAsIs) {
  devices("NVIDIA GeForce RTX 4090,8.9,1");
  KernelModuleSpec spec = rmsnorm("sm_86_sm_89.fatbin");
  spec.source.clear();
  spec.entry_points = {"_Z5scalePffi"};  // the fixture's kernel
  KernelModule module(spec, runtime());
  const auto loaded = module.load(0);
  EXPECT_EQ(loaded->report().path, JitPath::prebuilt_sass);
  EXPECT_EQ(loaded->report().arch, "sm_89");
  EXPECT_EQ(loaded->report().device_name, "NVIDIA GeForce RTX 4090");
  void* scale = loaded->function("_Z5scalePffi");
  EXPECT_NE(scale, nullptr);
  float* data = nullptr;
  float factor = 2;
  int n = 0;
  void* parameters[] = {&data, &factor, &n};
  EXPECT_NO_THROW(loaded->launch(scale, 1, 1, 1, 32, 1, 1, 0, nullptr, parameters));
  EXPECT_THROW(loaded->function("no_such_kernel"), JitError);
}

TEST_F(JitModule, PrebuiltPtxIsLeftToTheDriverOnANewerGpu) {
  devices("NVIDIA GeForce RTX 5090,12.0,1");
  KernelModuleSpec spec = rmsnorm("compute_90.fatbin");
  spec.source.clear();
  spec.entry_points = {"_Z5scalePffi"};
  KernelModule module(spec, runtime());
  const auto loaded = module.load(0);
  EXPECT_EQ(loaded->report().path, JitPath::driver_ptx);
  EXPECT_EQ(loaded->report().arch, "compute_90");
}

TEST_F(JitModule, NvrtcCompilesTheSourceWhenNoPrebuiltImageRunsThenTheCacheServesIt) {
  devices("NVIDIA GeForce RTX 5090,12.0,1");
  {
    KernelModule module(rmsnorm("sm_86_sm_89.fatbin"), runtime());
    const auto loaded = module.load(0);
    EXPECT_EQ(loaded->report().path, JitPath::nvrtc);
    EXPECT_EQ(loaded->report().arch, "sm_120");
    EXPECT_FALSE(loaded->report().cache_hit);
    EXPECT_NE(loaded->report().reason.find("No prebuilt image runs on sm_120"), std::string::npos)
        << loaded->report().reason;
    EXPECT_NE(loaded->function("rmsnorm_f32"), nullptr);
    EXPECT_NE(loaded->function("rmsnorm<float>"), nullptr);  // through its lowered name
  }
  // A second module object on a new runtime (as a new process would make):
  // the disk cache answers, lowered names included.
  KernelModule again(rmsnorm("sm_86_sm_89.fatbin"),
                     std::make_shared<JitRuntime>(runtime_->settings()));
  const auto loaded = again.load(0);
  EXPECT_TRUE(loaded->report().cache_hit);
  EXPECT_NE(loaded->function("rmsnorm<float>"), nullptr);
}

TEST_F(JitModule, ManyThreadsLoadingAtOnceLoadAndCompileOnce) {
  devices("NVIDIA H100,9.0,1");
  KernelModule module(rmsnorm(), runtime());
  std::vector<std::shared_ptr<archfit::jit::LoadedModule>> results(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i)
    threads.emplace_back([&, i] { results[i] = module.load(0); });
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) EXPECT_EQ(result, results[0]);
  EXPECT_EQ(runtime_->cache().stats().builds, 1u);
}

TEST_F(JitModule, ADriverThatRefusesThePrebuiltImageFallsBackToNvrtc) {
  // compute_90 PTX of ISA 9.0 (nvcc 13.0) runs on an H100 by the rules, but a
  // CUDA 12.0 driver cannot JIT-compile that ISA: it refuses (222), and the
  // module is compiled from source instead.
  devices("NVIDIA H100,9.0,1");
  archfit::testing::set_env("ARCHFIT_FAKE_CUDA_VERSION", "12000");
  KernelModule module(rmsnorm("compute_90.fatbin"), runtime());
  const auto loaded = module.load(0);
  EXPECT_EQ(loaded->report().path, JitPath::nvrtc);
  EXPECT_EQ(loaded->report().arch, "sm_90");
  EXPECT_NE(loaded->report().reason.find("the driver refused the prebuilt compute_90 image "
                                         "(CUDA_ERROR_UNSUPPORTED_PTX_VERSION)"),
            std::string::npos)
      << loaded->report().reason;
}

TEST_F(JitModule, NothingThatCanRunIsAClearErrorNotACrash) {
  devices("NVIDIA GeForce RTX 5090,12.0,1");
  KernelModuleSpec spec = rmsnorm("sm_80.fatbin");
  spec.source.clear();
  spec.entry_points = {"_Z5scalePffi"};
  KernelModule module(spec, runtime());
  try {
    module.load(0);
    FAIL() << "loaded";
  } catch (const JitError& error) {
    EXPECT_NE(std::string(error.what()).find("ship an image for sm_120"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(module.load(3), JitError);  // no such device
  KernelModuleSpec empty;
  empty.name = "empty";
  empty.entry_points = {"k"};
  EXPECT_THROW(KernelModule(empty, runtime()), JitError);
}
