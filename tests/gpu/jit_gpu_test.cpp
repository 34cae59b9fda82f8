// Kernel modules on a real GPU: RMSNorm loaded through each path the
// selection can take, launched, and compared with the CPU reference
// (kernels/rmsnorm_reference.hpp); the image-generation kernels registered
// and launched through the C ABI, each compared with its CPU reference.
// Skips, saying why, without a GPU.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <stdexcept>
#include <vector>

#include "archfit/archfit.h"
#include "fp8_to_bf16_reference.hpp"
#include "gguf_dequant_reference.hpp"
#include "gpu_inputs.hpp"
#include "groupnorm_silu_reference.hpp"
#include "jit/kernel_module.hpp"
#include "rmsnorm_reference.hpp"

namespace fs = std::filesystem;
using archfit::gpu_tests::fatbin_dir;
using archfit::gpu_tests::kernels_dir;
using archfit::gpu_tests::read_input;
using archfit::jit::JitPath;
using archfit::jit::KernelModule;
using archfit::jit::KernelModuleSpec;

namespace {

// The name of GPU 0, or nullopt with `reason` saying why there is none.
std::optional<std::string> first_gpu(std::string& reason) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    reason = std::string("no CUDA GPU here (") + cudaGetErrorString(error) +
             "): the GPU tests run on a machine with one (tests/gpu/run.sh)";
    return std::nullopt;
  }
  cudaDeviceProp properties{};
  cudaGetDeviceProperties(&properties, 0);
  return std::string(properties.name);
}

class GpuRmsnorm : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::optional<std::string> device = first_gpu(skip_reason_);
    if (!device) GTEST_SKIP() << skip_reason_;
    device_ = *device;
    cache_dir_ = fs::temp_directory_path() / ("archfit_gpu_cache_" + std::to_string(::getpid()));
    archfit::jit::JitSettings settings;
    settings.cache.emplace();
    settings.cache->dir = cache_dir_;
    runtime_ = std::make_shared<archfit::jit::JitRuntime>(settings);
  }
  void TearDown() override {
    runtime_.reset();
    if (!cache_dir_.empty()) fs::remove_all(cache_dir_);
  }

  KernelModuleSpec spec(const char* prebuilt) {
    KernelModuleSpec spec;
    spec.name = "gpu.rmsnorm";
    spec.source = read_input(kernels_dir() / "rmsnorm.cu");
    spec.source_name = "rmsnorm.cu";
    spec.entry_points = {"rmsnorm_f32", "rmsnorm<float>"};
    if (prebuilt) {
      const std::string bytes = read_input(fatbin_dir() / prebuilt);
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

  // The machine's libcuda and a cache of the test's own.
  std::shared_ptr<archfit::jit::JitRuntime> runtime() { return runtime_; }

  std::string device_;
  std::string skip_reason_;
  fs::path cache_dir_;
  std::shared_ptr<archfit::jit::JitRuntime> runtime_;
};

}  // namespace

TEST_F(GpuRmsnorm, PrebuiltSass) {
  KernelModule module(spec("rmsnorm_sass.fatbin"), runtime());
  run_and_compare(module, "rmsnorm_f32");
  EXPECT_EQ(module.load(0)->report().path, JitPath::prebuilt_sass);
}

TEST_F(GpuRmsnorm, DriverJitOfPrebuiltPtx) {
  KernelModule module(spec("rmsnorm_ptx.fatbin"), runtime());
  run_and_compare(module, "rmsnorm_f32");
  EXPECT_EQ(module.load(0)->report().path, JitPath::driver_ptx);
}

TEST_F(GpuRmsnorm, NvrtcFromSourceThenTheCache) {
  {
    KernelModule module(spec(nullptr), runtime());
    run_and_compare(module, "rmsnorm<float>");
    EXPECT_EQ(module.load(0)->report().path, JitPath::nvrtc);
    EXPECT_FALSE(module.load(0)->report().cache_hit);
  }
  KernelModule again(spec(nullptr), runtime());
  run_and_compare(again, "rmsnorm_f32");
  EXPECT_TRUE(again.load(0)->report().cache_hit);
}

// --- the image-generation kernels, through the C ABI ------------------------------
//
// GroupNorm+SiLU, GGUF Q8_0/Q4_K dequantisation and fp8 e4m3 to bf16, each
// registered with archfit_module_create as an op author would, loaded on
// device 0 twice, from its source alone (NVRTC for the device's exact arch)
// and from its nvcc SASS fatbin alone (tests/gpu/CMakeLists.txt), launched
// with archfit_loaded_module_launch, and compared element by element with
// its CPU reference (kernels/*_reference.hpp) within the tolerance that
// header gives for the element type.

namespace {

// Host-side conversions between float and each element type.
template <typename T>
struct Host;
template <>
struct Host<float> {
  static float to(float value) { return value; }
  static float from(float value) { return value; }
};
template <>
struct Host<__half> {
  static __half to(float value) { return __float2half_rn(value); }
  static float from(__half value) { return __half2float(value); }
};
template <>
struct Host<__nv_bfloat16> {
  static __nv_bfloat16 to(float value) { return __float2bfloat16_rn(value); }
  static float from(__nv_bfloat16 value) { return __bfloat162float(value); }
};

// Device memory for `count` values of T, freed at the end of the scope.
template <typename T>
struct DeviceBuffer {
  explicit DeviceBuffer(size_t count, size_t extra_bytes = 0) {
    if (cudaMalloc(&pointer, count * sizeof(T) + extra_bytes) != cudaSuccess)
      throw std::runtime_error("cudaMalloc failed");
  }
  ~DeviceBuffer() { cudaFree(pointer); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* pointer = nullptr;
};

template <typename T>
std::vector<T> download(const T* device, size_t count) {
  std::vector<T> host(count);
  if (cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess)
    throw std::runtime_error("cudaMemcpy to the host failed");
  return host;
}

template <typename T>
void upload(T* device, const std::vector<T>& host) {
  if (cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice) !=
      cudaSuccess)
    throw std::runtime_error("cudaMemcpy to the device failed");
}

// The worst |got - expected| / max(1, |expected|); a NaN where the other
// has none counts as infinitely wrong, NaN against NaN as right.
double worst_error(const std::vector<float>& got, const std::vector<float>& expected) {
  if (got.size() != expected.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) || std::isnan(expected[i])) {
      if (std::isnan(got[i]) != std::isnan(expected[i])) return INFINITY;
      continue;
    }
    worst = std::max(
        worst, std::abs(1.0 * got[i] - expected[i]) / std::max(1.0, std::abs(1.0 * expected[i])));
  }
  return worst;
}

// A little-endian fp16 field of a GGUF block: a random finite value of
// exponent 2^(low-15) .. 2^(high-15), either sign.
void put_random_fp16(uint8_t* at, std::mt19937& random, int low, int high) {
  const uint16_t bits = static_cast<uint16_t>(
      (random() & 0x83ffu) | static_cast<uint16_t>(low + random() % (high - low + 1)) << 10);
  at[0] = static_cast<uint8_t>(bits & 0xff);
  at[1] = static_cast<uint8_t>(bits >> 8);
}

class GpuImagegenKernels : public ::testing::Test {
 protected:
  // A kernel module on device 0 through the C ABI; destroyed with its handles.
  struct Module {
    ~Module() {
      archfit_loaded_module_destroy(loaded);
      archfit_module_destroy(module);
    }
    archfit_module* module = nullptr;
    archfit_loaded_module* loaded = nullptr;
    std::string path, arch;  // archfit_load_info: "nvrtc" / "prebuilt-sass", "sm_90"
  };

  void SetUp() override {
    const std::optional<std::string> device = first_gpu(skip_reason_);
    if (!device) GTEST_SKIP() << skip_reason_;
    device_ = *device;
    ASSERT_EQ(archfit_context_create(nullptr, &context_), ARCHFIT_OK) << archfit_last_error();
  }
  void TearDown() override { archfit_context_destroy(context_); }

  // The C ABI's modules compile through the process's kernel cache, which
  // reads ARCHFIT_CACHE_DIR once, when first used: one scratch directory
  // for the whole suite, removed after it.
  static void SetUpTestSuite() {
    cache_dir_ =
        fs::temp_directory_path() / ("archfit_gpu_imagegen_cache_" + std::to_string(::getpid()));
    if (const char* old = std::getenv("ARCHFIT_CACHE_DIR")) old_cache_env_ = old;
    ::setenv("ARCHFIT_CACHE_DIR", cache_dir_.c_str(), 1);
  }
  static void TearDownTestSuite() {
    fs::remove_all(cache_dir_);
    if (old_cache_env_) {
      ::setenv("ARCHFIT_CACHE_DIR", old_cache_env_->c_str(), 1);
    } else {
      ::unsetenv("ARCHFIT_CACHE_DIR");
    }
  }

  // kernels/<name>.cu registered with `entries`, from its source alone
  // (prebuilt false: NVRTC compiles it) or its SASS fatbin alone, and loaded.
  std::unique_ptr<Module> load(const std::string& name, const std::vector<const char*>& entries,
                               bool prebuilt) {
    const std::string source = read_input(kernels_dir() / (name + ".cu"));
    const std::string image = prebuilt ? read_input(fatbin_dir() / (name + "_sass.fatbin")) : "";
    const std::string module_name = "gpu." + name;
    const std::string source_name = name + ".cu";
    archfit_module_desc desc{};
    desc.struct_size = sizeof desc;
    desc.name = module_name.c_str();
    desc.source = prebuilt ? nullptr : source.c_str();
    desc.source_name = source_name.c_str();
    desc.entry_points = entries.data();
    desc.entry_point_count = entries.size();
    desc.prebuilt = prebuilt ? image.data() : nullptr;
    desc.prebuilt_size = prebuilt ? image.size() : 0;
    auto module = std::make_unique<Module>();
    if (prebuilt && image.empty()) throw std::runtime_error("no " + name + "_sass.fatbin");
    if (archfit_module_create(context_, &desc, &module->module) != ARCHFIT_OK ||
        archfit_module_load(module->module, 0, &module->loaded) != ARCHFIT_OK)
      throw std::runtime_error(name + ": " + archfit_last_error());
    archfit_load_info info{};
    info.struct_size = sizeof info;
    if (archfit_loaded_module_info(module->loaded, &info) != ARCHFIT_OK)
      throw std::runtime_error(archfit_last_error());
    module->path = info.path;
    module->arch = info.arch;
    std::printf("[gpu] %s: %s %s %s in %.1f ms (%s)\n", device_.c_str(), name.c_str(), info.path,
                info.arch, info.milliseconds, info.reason);
    return module;
  }

  // Launches `entry` with a 1-D grid and block, and waits for it.
  void launch(const Module& module, const char* entry, unsigned grid, unsigned block,
              void** parameters) {
    void* function = nullptr;
    if (archfit_loaded_module_function(module.loaded, entry, &function) != ARCHFIT_OK)
      throw std::runtime_error(std::string(entry) + ": " + archfit_last_error());
    archfit_launch_config config{};
    config.struct_size = sizeof config;
    config.grid[0] = grid;
    config.block[0] = block;
    if (archfit_loaded_module_launch(module.loaded, function, &config, parameters) != ARCHFIT_OK)
      throw std::runtime_error(std::string(entry) + ": " + archfit_last_error());
    const cudaError_t error = cudaDeviceSynchronize();
    if (error != cudaSuccess)
      throw std::runtime_error(std::string(entry) + ": " + cudaGetErrorString(error));
  }

  // The path the module took must be the one asked for: a fatbin alone
  // loads as prebuilt SASS, a source alone through NVRTC.
  void expect_path(const Module& module, bool prebuilt) {
    EXPECT_EQ(module.path, prebuilt ? "prebuilt-sass" : "nvrtc") << module.arch;
  }

  // GroupNorm+SiLU of element type T on one shape: the inputs rounded to T
  // first, so that the reference sees what the kernel sees.
  template <typename T>
  void groupnorm_silu_case(const Module& module, const char* entry, double tolerance) {
    constexpr size_t batch = 2, channels = 96, hw = 15 * 17, groups = 32;  // 3 channels a group
    std::mt19937 random(11);
    std::uniform_real_distribution<float> value(-3, 3), offset(-4, 4), weight(0.5f, 1.5f),
        bias(-0.5f, 0.5f);
    std::vector<float> x(batch * channels * hw), gamma(channels), beta(channels);
    for (size_t c = 0; c < batch * channels; ++c) {
      const float shift = offset(random);  // groups with a mean far from 0
      for (size_t i = 0; i < hw; ++i) x[c * hw + i] = shift + value(random);
    }
    for (auto& v : gamma) v = weight(random);
    for (auto& v : beta) v = bias(random);
    std::vector<T> hx(x.size()), hgamma(channels), hbeta(channels);
    for (size_t i = 0; i < x.size(); ++i) x[i] = Host<T>::from(hx[i] = Host<T>::to(x[i]));
    for (size_t c = 0; c < channels; ++c) {
      gamma[c] = Host<T>::from(hgamma[c] = Host<T>::to(gamma[c]));
      beta[c] = Host<T>::from(hbeta[c] = Host<T>::to(beta[c]));
    }
    DeviceBuffer<T> dx(x.size()), dgamma(channels), dbeta(channels), dy(x.size());
    upload(dx.pointer, hx);
    upload(dgamma.pointer, hgamma);
    upload(dbeta.pointer, hbeta);
    int c = static_cast<int>(channels), h = static_cast<int>(hw), g = static_cast<int>(groups);
    float eps = 1e-6f;
    void* parameters[] = {&dx.pointer, &dgamma.pointer, &dbeta.pointer, &dy.pointer, &c, &h, &g,
                          &eps};
    launch(module, entry, static_cast<unsigned>(batch * groups), 256, parameters);
    std::vector<float> y;
    for (const T& v : download(dy.pointer, x.size())) y.push_back(Host<T>::from(v));
    const auto expected = archfit::kernels::groupnorm_silu_reference(x, gamma, beta, batch,
                                                                     channels, hw, groups, eps);
    EXPECT_LE(worst_error(y, expected), tolerance)
        << entry << " via " << module.path << " " << module.arch << " on " << device_;
  }

  // GGUF blocks of `block_bytes` each: random bytes, then d (and dmin, when
  // `scales` is 2) set to sane fp16 values; dequantised by `entry` from an
  // odd address (the kernel needs no alignment) with a grid too small to
  // cover them in one step (the grid-stride loop).
  template <typename T>
  void dequantize_case(const Module& module, const char* entry, size_t block_count,
                       size_t block_bytes, int scales, size_t work_per_block,
                       std::vector<float> (*reference)(const std::vector<uint8_t>&),
                       double tolerance) {
    std::mt19937 random(13);
    std::vector<uint8_t> blocks(block_count * block_bytes);
    for (auto& byte : blocks) byte = static_cast<uint8_t>(random());
    for (size_t b = 0; b < block_count; ++b)
      for (int s = 0; s < scales; ++s)
        put_random_fp16(&blocks[b * block_bytes + 2 * s], random, 5, 13);
    const size_t values = reference(blocks).size();
    DeviceBuffer<uint8_t> dblocks(blocks.size(), 1);
    DeviceBuffer<T> dy(values);
    uint8_t* odd = dblocks.pointer + 1;
    if (cudaMemcpy(odd, blocks.data(), blocks.size(), cudaMemcpyHostToDevice) != cudaSuccess)
      throw std::runtime_error("cudaMemcpy to the device failed");
    long long count = static_cast<long long>(block_count);
    void* parameters[] = {&odd, &dy.pointer, &count};
    const size_t threads = block_count * work_per_block;
    launch(module, entry, static_cast<unsigned>(std::min<size_t>((threads + 255) / 256, 40)), 256,
           parameters);
    std::vector<float> y;
    for (const T& v : download(dy.pointer, values)) y.push_back(Host<T>::from(v));
    EXPECT_LE(worst_error(y, reference(blocks)), tolerance)
        << entry << " via " << module.path << " " << module.arch << " on " << device_;
  }

  std::string device_;
  std::string skip_reason_;
  archfit_context* context_ = nullptr;
  static inline fs::path cache_dir_;
  static inline std::optional<std::string> old_cache_env_;
};

}  // namespace

TEST_F(GpuImagegenKernels, GroupNormSiluMatchesItsReference) {
  for (const bool prebuilt : {false, true}) {
    const auto module =
        load("groupnorm_silu", {"groupnorm_silu_f32", "groupnorm_silu_f16", "groupnorm_silu_bf16"},
             prebuilt);
    expect_path(*module, prebuilt);
    groupnorm_silu_case<float>(*module, "groupnorm_silu_f32",
                               archfit::kernels::kGroupNormSiluToleranceF32);
    groupnorm_silu_case<__half>(*module, "groupnorm_silu_f16",
                                archfit::kernels::kGroupNormSiluToleranceF16);
    groupnorm_silu_case<__nv_bfloat16>(*module, "groupnorm_silu_bf16",
                                       archfit::kernels::kGroupNormSiluToleranceBF16);
  }
}

TEST_F(GpuImagegenKernels, GgufDequantisationMatchesItsReference) {
  namespace k = archfit::kernels;
  for (const bool prebuilt : {false, true}) {
    const auto module = load("gguf_dequant",
                             {"dequantize_q8_0_f16", "dequantize_q8_0_bf16", "dequantize_q4_k_f16",
                              "dequantize_q4_k_bf16"},
                             prebuilt);
    expect_path(*module, prebuilt);
    // Q8_0: a thread per value; Q4_K: a thread per quant byte (two values).
    dequantize_case<__half>(*module, "dequantize_q8_0_f16", 4096, k::kQ8_0BlockBytes, 1, 32,
                            k::dequantize_q8_0_reference, k::kGgufDequantToleranceF16);
    dequantize_case<__nv_bfloat16>(*module, "dequantize_q8_0_bf16", 4096, k::kQ8_0BlockBytes, 1, 32,
                                   k::dequantize_q8_0_reference, k::kGgufDequantToleranceBF16);
    dequantize_case<__half>(*module, "dequantize_q4_k_f16", 1024, k::kQ4_KBlockBytes, 2, 128,
                            k::dequantize_q4_k_reference, k::kGgufDequantToleranceF16);
    dequantize_case<__nv_bfloat16>(*module, "dequantize_q4_k_bf16", 1024, k::kQ4_KBlockBytes, 2,
                                   128, k::dequantize_q4_k_reference, k::kGgufDequantToleranceBF16);
  }
}

TEST_F(GpuImagegenKernels, Fp8E4m3ToBf16MatchesItsReference) {
  for (const bool prebuilt : {false, true}) {
    const auto module = load("fp8_to_bf16", {"fp8_e4m3_to_bf16"}, prebuilt);
    expect_path(*module, prebuilt);
    // Every bit pattern (NaN included) many times over.
    constexpr size_t count = 100003;
    std::vector<uint8_t> x(count);
    for (size_t i = 0; i < count; ++i) x[i] = static_cast<uint8_t>(i * 7);
    DeviceBuffer<uint8_t> dx(count);
    DeviceBuffer<__nv_bfloat16> dy(count);
    upload(dx.pointer, x);
    float scale = 0.37f;
    // From the start (four values a step, and a tail of one), then from one
    // value on (x no longer 4-byte aligned: one value at a time); either
    // way the last two values of the buffer are left out and must keep the
    // 0xffff they were set to, as must the one skipped at the start.
    for (const size_t skip : {size_t{0}, size_t{1}}) {
      ASSERT_EQ(cudaMemset(dy.pointer, 0xff, count * sizeof(__nv_bfloat16)), cudaSuccess);
      uint8_t* in = dx.pointer + skip;
      __nv_bfloat16* out = dy.pointer + skip;
      const size_t converted = count - skip - 2;
      long long n = static_cast<long long>(converted);
      void* parameters[] = {&in, &out, &scale, &n};
      launch(*module, "fp8_e4m3_to_bf16", 64, 256, parameters);
      const auto all = download(dy.pointer, count);
      std::vector<float> y;
      for (size_t i = skip; i < skip + converted; ++i)
        y.push_back(Host<__nv_bfloat16>::from(all[i]));
      const auto expected = archfit::kernels::fp8_e4m3_to_bf16_reference(
          std::vector<uint8_t>(x.begin() + static_cast<std::ptrdiff_t>(skip),
                               x.begin() + static_cast<std::ptrdiff_t>(skip + converted)),
          scale);
      EXPECT_LE(worst_error(y, expected), archfit::kernels::kFp8ToBf16ToleranceBF16)
          << "offset " << skip << " via " << module->path << " " << module->arch << " on "
          << device_;
      for (const size_t i : {size_t{0}, count - 2, count - 1}) {
        if (i == 0 && skip == 0) continue;
        __nv_bfloat16_raw raw = all[i];
        EXPECT_EQ(raw.x, 0xffff) << "value " << i << " written, outside the " << converted
                                 << " from " << skip;
      }
    }
  }
}
