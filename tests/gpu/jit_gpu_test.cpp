// Kernel modules on a real GPU: RMSNorm loaded through each path the
// selection can take, launched, and compared with the CPU reference
// (kernels/rmsnorm_reference.hpp). Skips, saying why, without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "jit/kernel_module.hpp"
#include "rmsnorm_reference.hpp"

namespace fs = std::filesystem;
using archfit::jit::JitPath;
using archfit::jit::KernelCache;
using archfit::jit::KernelModule;
using archfit::jit::KernelModuleSpec;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class GpuRmsnorm : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess || count == 0) {
      GTEST_SKIP() << "no CUDA GPU here (" << cudaGetErrorString(error)
                   << "): the GPU tests run on a machine with one (tests/gpu/run.sh)";
    }
    cudaDeviceProp properties{};
    cudaGetDeviceProperties(&properties, 0);
    device_ = properties.name;
    KernelCache::Options options;
    cache_dir_ = fs::temp_directory_path() / ("archfit_gpu_cache_" + std::to_string(::getpid()));
    options.dir = cache_dir_;
    cache_ = std::make_unique<KernelCache>(options);
  }
  void TearDown() override {
    cache_.reset();
    if (!cache_dir_.empty()) fs::remove_all(cache_dir_);
  }

  KernelModuleSpec spec(const char* prebuilt) {
    KernelModuleSpec spec;
    spec.name = "gpu.rmsnorm";
    spec.source = read_text(fs::path(ARCHFIT_KERNELS_DIR) / "rmsnorm.cu");
    spec.source_name = "rmsnorm.cu";
    spec.entry_points = {"rmsnorm_f32", "rmsnorm<float>"};
    if (prebuilt) {
      const std::string bytes = read_text(fs::path(ARCHFIT_GPU_FATBIN_DIR) / prebuilt);
      spec.prebuilt.assign(reinterpret_cast<const std::byte*>(bytes.data()),
                           reinterpret_cast<const std::byte*>(bytes.data()) + bytes.size());
      spec.source.clear();  // the prebuilt path must stand alone
    }
    return spec;
  }

  // Runs `entry` of the loaded module on 64 rows of 1000 and checks every
  // element against the reference.
  void run_and_compare(KernelModule& module, const char* entry) {
    const auto loaded = module.load(0);
    constexpr size_t rows = 64, cols = 1000;
    std::mt19937 random(42);
    std::uniform_real_distribution<float> value(-3, 3);
    std::vector<float> x(rows * cols), weight(cols), y(rows * cols);
    for (auto& v : x) v = value(random);
    for (auto& v : weight) v = value(random);
    float *dx = nullptr, *dw = nullptr, *dy = nullptr;
    ASSERT_EQ(cudaMalloc(&dx, x.size() * 4), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dw, weight.size() * 4), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dy, y.size() * 4), cudaSuccess);
    cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dw, weight.data(), weight.size() * 4, cudaMemcpyHostToDevice);
    int columns = static_cast<int>(cols);
    float eps = 1e-6f;
    void* parameters[] = {&dx, &dw, &dy, &columns, &eps};
    loaded->launch(loaded->function(entry), rows, 1, 1, 256, 1, 1, 0, nullptr, parameters);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(y.data(), dy, y.size() * 4, cudaMemcpyDeviceToHost);
    cudaFree(dx);
    cudaFree(dw);
    cudaFree(dy);
    const auto expected = archfit::kernels::rmsnorm_reference(x, weight, rows, cols, eps);
    double worst = 0;
    for (size_t i = 0; i < y.size(); ++i)
      worst = std::max(worst,
                       std::abs(y[i] - expected[i]) / std::max(1.0, std::abs(1.0 * expected[i])));
    EXPECT_LE(worst, archfit::kernels::kRmsnormToleranceF32)
        << entry << " via " << archfit::jit::to_string(loaded->report().path) << " on " << device_;
    std::printf("[gpu] %s: %s %s in %.1f ms (%s)\n", device_.c_str(),
                std::string(archfit::jit::to_string(loaded->report().path)).c_str(),
                loaded->report().arch.c_str(), loaded->report().milliseconds,
                loaded->report().reason.c_str());
  }

  archfit::jit::JitOptions options() {
    archfit::jit::JitOptions options;
    options.cache = cache_.get();
    return options;
  }

  std::string device_;
  fs::path cache_dir_;
  std::unique_ptr<KernelCache> cache_;
};

}  // namespace

TEST_F(GpuRmsnorm, PrebuiltSass) {
  KernelModule module(spec("rmsnorm_sass.fatbin"), options());
  run_and_compare(module, "rmsnorm_f32");
  EXPECT_EQ(module.load(0)->report().path, JitPath::prebuilt_sass);
}

TEST_F(GpuRmsnorm, DriverJitOfPrebuiltPtx) {
  KernelModule module(spec("rmsnorm_ptx.fatbin"), options());
  run_and_compare(module, "rmsnorm_f32");
  EXPECT_EQ(module.load(0)->report().path, JitPath::driver_ptx);
}

TEST_F(GpuRmsnorm, NvrtcFromSourceThenTheCache) {
  {
    KernelModule module(spec(nullptr), options());
    run_and_compare(module, "rmsnorm<float>");
    EXPECT_EQ(module.load(0)->report().path, JitPath::nvrtc);
    EXPECT_FALSE(module.load(0)->report().cache_hit);
  }
  KernelModule again(spec(nullptr), options());
  run_and_compare(again, "rmsnorm_f32");
  EXPECT_TRUE(again.load(0)->report().cache_hit);
}
