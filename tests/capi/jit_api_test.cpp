// The kernel-module C ABI against the test-only driver (tests/fakes/): an op
// registers RMSNorm with prebuilt sm_86/sm_89 images, and on a simulated RTX
// 5090 archfit compiles it with NVRTC, loads it and launches it.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "archfit/archfit.h"
#include "archfit/archfit.hpp"
#include "fake_launch.hpp"

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class JitApi : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(fs::path(ARCHFIT_FIXTURE_DIR) / "sm_86_sm_89.fatbin"))
      GTEST_SKIP() << "nvcc fixtures are not built in " << ARCHFIT_FIXTURE_DIR;
    cache_ = fs::temp_directory_path() / ("archfit_jit_api_" + std::to_string(::getpid()));
    ::setenv("ARCHFIT_CACHE_DIR", cache_.c_str(), 1);
    ::setenv("ARCHFIT_FAKE_CUDA_DEVICES", "NVIDIA GeForce RTX 5090,12.0,1", 1);
    archfit_context_options options{};
    options.struct_size = sizeof options;
    options.libcuda = ARCHFIT_FAKE_CUDA;
    ASSERT_EQ(archfit_context_create(&options, &context_), ARCHFIT_OK) << archfit_last_error();
    source_ = read_text(std::string(ARCHFIT_KERNELS_DIR) + "/rmsnorm.cu");
    prebuilt_ = read_text(fs::path(ARCHFIT_FIXTURE_DIR) / "sm_86_sm_89.fatbin");
    desc_.struct_size = sizeof desc_;
    desc_.name = "test.rmsnorm";
    desc_.source = source_.c_str();
    desc_.source_name = "rmsnorm.cu";
    desc_.entry_points = entries_;
    desc_.entry_point_count = 2;
    desc_.prebuilt = prebuilt_.data();
    desc_.prebuilt_size = prebuilt_.size();
  }
  void TearDown() override {
    archfit_context_destroy(context_);
    fs::remove_all(cache_);
    ::unsetenv("ARCHFIT_CACHE_DIR");
    ::unsetenv("ARCHFIT_FAKE_CUDA_DEVICES");
  }
  archfit_context* context_ = nullptr;
  fs::path cache_;
  std::string source_, prebuilt_;
  const char* entries_[2] = {"rmsnorm_f32", "rmsnorm<float>"};
  archfit_module_desc desc_{};
};

}  // namespace

TEST_F(JitApi, RegisterLoadLookUpAndLaunchOnAGpuThePrebuiltImagesMiss) {
  archfit_module* module = nullptr;
  ASSERT_EQ(archfit_module_create(context_, &desc_, &module), ARCHFIT_OK) << archfit_last_error();
  archfit_loaded_module* loaded = nullptr;
  ASSERT_EQ(archfit_module_load(module, 0, &loaded), ARCHFIT_OK) << archfit_last_error();
  archfit_load_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(archfit_loaded_module_info(loaded, &info), ARCHFIT_OK);
  EXPECT_STREQ(info.path, "nvrtc");
  EXPECT_STREQ(info.arch, "sm_120");
  EXPECT_STREQ(info.device_name, "NVIDIA GeForce RTX 5090");
  EXPECT_NE(std::string(info.reason).find("No prebuilt image runs on sm_120"), std::string::npos);
  void* kernel = nullptr;
  ASSERT_EQ(archfit_loaded_module_function(loaded, "rmsnorm<float>", &kernel), ARCHFIT_OK)
      << archfit_last_error();
  archfit_launch_config config{};
  config.struct_size = sizeof config;
  config.grid[0] = 4;
  config.block[0] = 128;
  float* x = nullptr;
  float* w = nullptr;
  float* y = nullptr;
  int columns = 1024;
  float eps = 1e-6f;
  void* parameters[] = {&x, &w, &y, &columns, &eps};
  EXPECT_EQ(archfit_loaded_module_launch(loaded, kernel, &config, parameters), ARCHFIT_OK)
      << archfit_last_error();
  void* missing = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(archfit_loaded_module_function(loaded, "nope", &missing), ARCHFIT_ERROR_IO);
  EXPECT_EQ(missing, reinterpret_cast<void*>(0x1));  // untouched on failure
  archfit_loaded_module_destroy(loaded);
  archfit_module_destroy(module);
}

FakeLaunch last_fake_launch() { return ::last_fake_launch(ARCHFIT_FAKE_CUDA); }

TEST_F(JitApi, ALaunchReachesTheDriverOnTheCallersStreamWithItsDimensionsAndArguments) {
  archfit_module* module = nullptr;
  ASSERT_EQ(archfit_module_create(context_, &desc_, &module), ARCHFIT_OK) << archfit_last_error();
  archfit_loaded_module* loaded = nullptr;
  ASSERT_EQ(archfit_module_load(module, 0, &loaded), ARCHFIT_OK) << archfit_last_error();
  void* kernel = nullptr;
  ASSERT_EQ(archfit_loaded_module_function(loaded, "rmsnorm_f32", &kernel), ARCHFIT_OK);
  const unsigned long long before = last_fake_launch().count;

  archfit_launch_config config{};
  config.struct_size = sizeof config;
  config.grid[0] = 7;  // grid[1], grid[2] and block[2] left 0: they count as 1
  config.block[0] = 32;
  config.block[1] = 4;
  config.shared_bytes = 4096;
  // A stream as torch would hand one over (torch.cuda.current_stream().cuda_stream).
  config.stream = reinterpret_cast<void*>(0x5eed5eedULL);
  float* x = nullptr;
  void* parameters[] = {&x};
  ASSERT_EQ(archfit_loaded_module_launch(loaded, kernel, &config, parameters), ARCHFIT_OK)
      << archfit_last_error();

  const FakeLaunch launch = last_fake_launch();
  ASSERT_EQ(launch.count, before + 1) << "the fake driver saw no launch";
  EXPECT_EQ(launch.function, kernel);
  EXPECT_EQ(launch.stream, config.stream);
  EXPECT_EQ(launch.shared_bytes, 4096u);
  EXPECT_EQ(launch.grid[0], 7u);
  EXPECT_EQ(launch.grid[1], 1u);
  EXPECT_EQ(launch.grid[2], 1u);
  EXPECT_EQ(launch.block[0], 32u);
  EXPECT_EQ(launch.block[1], 4u);
  EXPECT_EQ(launch.block[2], 1u);
  EXPECT_EQ(launch.parameters, parameters);

  config.stream = nullptr;  // the default stream
  ASSERT_EQ(archfit_loaded_module_launch(loaded, kernel, &config, parameters), ARCHFIT_OK);
  EXPECT_EQ(last_fake_launch().stream, nullptr);
  archfit_loaded_module_destroy(loaded);
  archfit_module_destroy(module);
}

TEST_F(JitApi, NothingThatRunsIsUnsupportedAndSaysWhatToShip) {
  desc_.source = nullptr;
  archfit_module* module = nullptr;
  ASSERT_EQ(archfit_module_create(context_, &desc_, &module), ARCHFIT_OK) << archfit_last_error();
  archfit_loaded_module* loaded = nullptr;
  EXPECT_EQ(archfit_module_load(module, 0, &loaded), ARCHFIT_ERROR_UNSUPPORTED);
  EXPECT_NE(std::string(archfit_last_error()).find("ship an image for sm_120"), std::string::npos)
      << archfit_last_error();
  EXPECT_EQ(loaded, nullptr);
  archfit_module_destroy(module);
}

TEST_F(JitApi, BadDescriptionsAreInvalidArgumentsNamingTheField) {
  archfit_module* module = nullptr;
  desc_.entry_point_count = 0;
  EXPECT_EQ(archfit_module_create(context_, &desc_, &module), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(archfit_last_error()).find("entry point"), std::string::npos);
  const char* broken[1] = {nullptr};
  desc_.entry_points = broken;
  desc_.entry_point_count = 1;
  EXPECT_EQ(archfit_module_create(context_, &desc_, &module), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(archfit_last_error()).find("entry_points[0] is NULL"), std::string::npos);
  EXPECT_EQ(module, nullptr);
  archfit_module_destroy(nullptr);         // a no-op
  archfit_loaded_module_destroy(nullptr);  // a no-op
}

// archfit.hpp owns the module handles as the C calls above do by hand: the
// same NVRTC load on a simulated RTX 5090, the launch reaching the driver,
// and a failure as archfit::Error with its status (issue 25).
TEST_F(JitApi, TheCppWrapperOwnsModulesAndLoadedModulesAndThrowsOnFailure) {
  archfit_context_options options{};
  options.struct_size = sizeof options;
  options.libcuda = ARCHFIT_FAKE_CUDA;
  const archfit::Context context(&options);
  const archfit::Module module = context.module(desc_);
  const archfit::LoadedModule loaded = module.load(0);
  const archfit_load_info info = loaded.info();
  EXPECT_STREQ(info.path, "nvrtc");
  EXPECT_STREQ(info.arch, "sm_120");
  void* kernel = loaded.function("rmsnorm_f32");
  ASSERT_NE(kernel, nullptr);
  const unsigned long long before = last_fake_launch().count;
  archfit_launch_config config{};
  config.struct_size = sizeof config;
  config.grid[0] = 3;
  float* x = nullptr;
  void* parameters[] = {&x};
  loaded.launch(kernel, config, parameters);
  EXPECT_EQ(last_fake_launch().count, before + 1);
  EXPECT_EQ(last_fake_launch().grid[0], 3u);
  try {
    loaded.function("nope");
    ADD_FAILURE() << "an entry point never registered was found";
  } catch (const archfit::Error& error) {
    EXPECT_EQ(error.status(), ARCHFIT_ERROR_IO);
    EXPECT_NE(std::string(error.what()).find("nope"), std::string::npos) << error.what();
  }
  archfit_module_desc empty{};
  empty.struct_size = sizeof empty;
  empty.name = "test.empty";
  EXPECT_THROW(context.module(empty), archfit::Error);  // nothing that could ever load
}

// archfit_loaded_module_create is the consistent name (docs/c-abi.md, "Names");
// archfit_module_load, the first release's, is kept as the same call. Each
// failure names the function the caller wrote.
TEST_F(JitApi, LoadedModuleCreateIsTheCallModuleLoadWas) {
  archfit_module* module = nullptr;
  ASSERT_EQ(archfit_module_create(context_, &desc_, &module), ARCHFIT_OK) << archfit_last_error();
  archfit_loaded_module* by_new_name = nullptr;
  archfit_loaded_module* by_old_name = nullptr;
  ASSERT_EQ(archfit_loaded_module_create(module, 0, &by_new_name), ARCHFIT_OK)
      << archfit_last_error();
  ASSERT_EQ(archfit_module_load(module, 0, &by_old_name), ARCHFIT_OK) << archfit_last_error();
  archfit_load_info first{}, second{};
  first.struct_size = second.struct_size = sizeof first;
  ASSERT_EQ(archfit_loaded_module_info(by_new_name, &first), ARCHFIT_OK);
  ASSERT_EQ(archfit_loaded_module_info(by_old_name, &second), ARCHFIT_OK);
  EXPECT_STREQ(first.path, second.path);
  EXPECT_STREQ(first.arch, second.arch);
  archfit_loaded_module* none = nullptr;
  EXPECT_EQ(archfit_loaded_module_create(nullptr, 0, &none), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(archfit_last_error()).rfind("archfit_loaded_module_create: ", 0), 0u)
      << archfit_last_error();
  EXPECT_EQ(archfit_module_load(nullptr, 0, &none), ARCHFIT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(archfit_last_error()).rfind("archfit_module_load: ", 0), 0u)
      << archfit_last_error();
  archfit_loaded_module_destroy(by_old_name);
  archfit_loaded_module_destroy(by_new_name);
  archfit_module_destroy(module);
}

// A module holds its context's jit runtime (libcuda, kernel cache, NVRTC),
// so it may be loaded and launched after the context is gone.
TEST_F(JitApi, AModuleOutlivesTheContextThatMadeIt) {
  archfit_module* module = nullptr;
  ASSERT_EQ(archfit_module_create(context_, &desc_, &module), ARCHFIT_OK) << archfit_last_error();
  archfit_context_destroy(context_);
  context_ = nullptr;
  archfit_loaded_module* loaded = nullptr;
  ASSERT_EQ(archfit_loaded_module_create(module, 0, &loaded), ARCHFIT_OK) << archfit_last_error();
  archfit_module_destroy(module);
  void* kernel = nullptr;
  ASSERT_EQ(archfit_loaded_module_function(loaded, "rmsnorm_f32", &kernel), ARCHFIT_OK)
      << archfit_last_error();
  archfit_launch_config config{};
  config.struct_size = sizeof config;
  config.grid[0] = 1;
  float* x = nullptr;
  void* parameters[] = {&x};
  EXPECT_EQ(archfit_loaded_module_launch(loaded, kernel, &config, parameters), ARCHFIT_OK)
      << archfit_last_error();
  archfit_loaded_module_destroy(loaded);
}

// Two contexts do not share a kernel cache: each has its own, made from the
// environment when it is first used. Before, one cache served the process,
// so the second context answered from the first one's memory and never
// wrote to the folder it was given.
TEST_F(JitApi, EachContextHasAKernelCacheOfItsOwn) {
  archfit_module* first = nullptr;
  ASSERT_EQ(archfit_module_create(context_, &desc_, &first), ARCHFIT_OK) << archfit_last_error();
  archfit_loaded_module* loaded_first = nullptr;
  ASSERT_EQ(archfit_loaded_module_create(first, 0, &loaded_first), ARCHFIT_OK)
      << archfit_last_error();
  archfit_load_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(archfit_loaded_module_info(loaded_first, &info), ARCHFIT_OK);
  EXPECT_STREQ(info.cache, "built");

  const fs::path other_cache = cache_ / "other";
  ::setenv("ARCHFIT_CACHE_DIR", other_cache.c_str(), 1);
  archfit_context_options options{};
  options.struct_size = sizeof options;
  options.libcuda = ARCHFIT_FAKE_CUDA;
  archfit_context* other = nullptr;
  ASSERT_EQ(archfit_context_create(&options, &other), ARCHFIT_OK) << archfit_last_error();
  archfit_module* second = nullptr;
  ASSERT_EQ(archfit_module_create(other, &desc_, &second), ARCHFIT_OK) << archfit_last_error();
  archfit_loaded_module* loaded_second = nullptr;
  ASSERT_EQ(archfit_loaded_module_create(second, 0, &loaded_second), ARCHFIT_OK)
      << archfit_last_error();
  ASSERT_EQ(archfit_loaded_module_info(loaded_second, &info), ARCHFIT_OK);
  EXPECT_STREQ(info.cache, "built");  // not "memory": the first context's cache is not its own
  size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(other_cache))
    files += entry.is_regular_file();
  EXPECT_GT(files, 0u) << "nothing was written to " << other_cache;

  archfit_loaded_module_destroy(loaded_second);
  archfit_module_destroy(second);
  archfit_context_destroy(other);
  archfit_loaded_module_destroy(loaded_first);
  archfit_module_destroy(first);
}
