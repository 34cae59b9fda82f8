// host_adapters/libtorch (archfit/torch.hpp) against Debian's CPU-only
// libtorch: the op's registration and CPU kernel through torch's
// dispatcher, and the adapter's module loading and launching through the
// test driver (tests/fakes), which records each launch. The CUDA kernel
// itself runs in tests/gpu.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "archfit/torch.hpp"
#include "fake_launch.hpp"
#include "rms_norm_op.hpp"

namespace fs = std::filesystem;

namespace {

at::Tensor call_rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("archfit_test::rms_norm", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double)>();
  return op.call(x, weight, eps);
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const c10::Error& error) {
    return error.what_without_backtrace();
  }
  return "(no error)";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(TorchAdapterOp, IsRegisteredWithACpuAndACudaKernel) {
  const auto handle = c10::Dispatcher::singleton().findSchema({"archfit_test::rms_norm", ""});
  ASSERT_TRUE(handle.has_value());
  EXPECT_TRUE(handle->hasKernelForDispatchKey(c10::DispatchKey::CPU));
  EXPECT_TRUE(handle->hasKernelForDispatchKey(c10::DispatchKey::CUDA));
  EXPECT_EQ(handle->schema().arguments().size(), 3u);
}

TEST(TorchAdapterOp, TheCpuKernelGivesHandWorkedValues) {
  // Row [1, 2, 3, 4]: mean of squares 30/4 = 7.5, 1/sqrt(7.5) = 0.3651484;
  // times weight [1, 0.5, 2, 1]. Row [3, 0, 0, 4]: 25/4 = 6.25, 1/2.5 = 0.4.
  const at::Tensor x = at::tensor({1.f, 2.f, 3.f, 4.f, 3.f, 0.f, 0.f, 4.f}).reshape({2, 4});
  const at::Tensor weight = at::tensor({1.f, 0.5f, 2.f, 1.f});
  const at::Tensor y = call_rms_norm(x, weight, 0.0);
  const at::Tensor expected =
      at::tensor({0.3651484f, 0.3651484f, 2.1908902f, 1.4605935f, 1.2f, 0.f, 0.f, 1.6f})
          .reshape({2, 4});
  EXPECT_TRUE(at::allclose(y, expected, 1e-6, 1e-6)) << y;
  // eps enters under the root: [2, 2] with eps 4 is 2 / sqrt(4 + 4).
  const at::Tensor z = call_rms_norm(at::tensor({2.f, 2.f}).reshape({1, 2}), at::ones({2}), 4.0);
  EXPECT_NEAR(z[0][0].item<float>(), 0.7071068f, 1e-6);
}

TEST(TorchAdapterOp, BadInputsAreTorchErrorsNamingTheArgument) {
  const at::Tensor x = at::ones({2, 4});
  EXPECT_TRUE(contains(error_of([&] { call_rms_norm(x, at::ones({3}), 1e-6); }),
                       "rms_norm: weight must be [4], got [3]"));
  EXPECT_TRUE(contains(error_of([&] { call_rms_norm(at::ones({4}), at::ones({4}), 1e-6); }),
                       "x must be [rows, cols], got 1 dimensions"));
  EXPECT_TRUE(contains(error_of([&] { call_rms_norm(x.to(at::kDouble), at::ones({4}), 1e-6); }),
                       "must be float32, got Double and Float"));
}

FakeLaunch last_fake_launch() { return ::last_fake_launch(ARCHFIT_FAKE_CUDA); }

class TorchAdapterModule : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = fs::temp_directory_path() / ("archfit_torch_adapter_" + std::to_string(::getpid()));
    ::setenv("ARCHFIT_CACHE_DIR", cache_.c_str(), 1);
    // Device 0 an RTX 4090 (the plugin's sm_89 SASS runs), device 1 a GTX 1080
    // (sm_61: older than every prebuilt image, and the source needs sm_70).
    ::setenv("ARCHFIT_FAKE_CUDA_DEVICES",
             "NVIDIA GeForce RTX 4090,8.9,1;NVIDIA GeForce GTX 1080,6.1,1", 1);
  }
  void TearDown() override {
    fs::remove_all(cache_);
    ::unsetenv("ARCHFIT_CACHE_DIR");
    ::unsetenv("ARCHFIT_FAKE_CUDA_DEVICES");
  }
  static archfit::torch::Module rmsnorm() {
    return archfit::torch::Module::from_plugin("imagegen_ops.rmsnorm", {ARCHFIT_PLUGIN_BUILD_DIR},
                                               ARCHFIT_FAKE_CUDA);
  }
  fs::path cache_;
};

TEST_F(TorchAdapterModule, LaunchesOnTheGivenDeviceAndStreamThroughTheDriver) {
  archfit::torch::Module module = rmsnorm();
  const c10::Device gpu(c10::DeviceType::CUDA, 0);
  const archfit_load_info info = module.info(gpu);
  EXPECT_STREQ(info.path, "prebuilt-sass");
  EXPECT_STREQ(info.arch, "sm_89");
  EXPECT_STREQ(info.device_name, "NVIDIA GeForce RTX 4090");

  const unsigned long long before = last_fake_launch().count;
  float* x = nullptr;
  int cols = 4096;
  float eps = 1e-6f;
  void* parameters[] = {&x, &x, &x, &cols, &eps};
  archfit::torch::LaunchShape shape;
  shape.grid[0] = 77;
  shape.block[0] = 256;
  void* const stream = reinterpret_cast<void*>(0x70c4ULL);  // as torch's current stream would be
  module.launch(gpu, "rmsnorm_f32", shape, stream, parameters);
  module.launch(gpu, "rmsnorm_f32", shape, stream, parameters);  // the function from its cache
  const FakeLaunch launch = last_fake_launch();
  EXPECT_EQ(launch.count, before + 2);
  EXPECT_EQ(launch.stream, stream);
  EXPECT_EQ(launch.grid[0], 77u);
  EXPECT_EQ(launch.block[0], 256u);
  EXPECT_EQ(launch.parameters, parameters);
}

TEST_F(TorchAdapterModule, FailuresAreTorchErrorsWithArchfitsReason) {
  archfit::torch::Module module = rmsnorm();
  const c10::Device gpu(c10::DeviceType::CUDA, 0);
  void* parameters[] = {nullptr};
  archfit::torch::LaunchShape shape;
  EXPECT_TRUE(
      contains(error_of([&] { module.launch(gpu, "softmax_f32", shape, nullptr, parameters); }),
               "archfit: looking up kernel softmax_f32"));
  // No image or compile reaches sm_61: the load fails, saying so, and the
  // failure is not remembered as a load (the next call asks again).
  const c10::Device old_gpu(c10::DeviceType::CUDA, 1);
  const std::string error = error_of([&] { module.info(old_gpu); });
  EXPECT_TRUE(contains(error, "archfit: loading kernel module on cuda:1: ")) << error;
  EXPECT_TRUE(contains(error, "sm_61")) << error;
  EXPECT_TRUE(contains(error_of([&] { module.info(old_gpu); }), "loading kernel module on cuda:1"));
  EXPECT_TRUE(contains(error_of([&] { module.info(c10::Device(c10::DeviceType::CPU)); }),
                       "loads on a CUDA device, not on cpu"));
  EXPECT_TRUE(contains(error_of([&] {
                         archfit::torch::Module::from_plugin("imagegen_ops.softmax", {},
                                                             ARCHFIT_FAKE_CUDA);
                       }),
                       "no loaded plugin offers a module named \"imagegen_ops.softmax\""));
}

TEST(TorchAdapterStream, WithoutTorchCudaTheCurrentStreamIsAnErrorThatSaysWhy) {
  const std::string error =
      error_of([] { archfit::torch::current_stream(c10::Device(c10::DeviceType::CUDA, 0)); });
  EXPECT_TRUE(contains(error, "compiled without ARCHFIT_TORCH_CUDA=1")) << error;
  EXPECT_TRUE(
      contains(error_of([] { archfit::torch::current_stream(c10::Device(c10::DeviceType::CPU)); }),
               "launches on a CUDA device, not on cpu"));
}

}  // namespace
