// Each image-generation kernel's NVRTC build against its nvcc build for the
// same GPU: both loaded through the C ABI (the source alone, which archfit
// compiles with NVRTC for the device; the nvcc SASS fatbin alone), launched
// on the same buffers at sizes image models use, timed with CUDA events.
// Prints one line per kernel: median microseconds per launch of each build
// and their ratio (issue 7 asks NVRTC ≤ nvcc). Without a GPU it says so and
// exits 0: a benchmark prints figures, it is not a test.
//
//   build-gpu/tests/gpu/archfit_kernel_speed_bench [--repeats N]
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "archfit/archfit.h"
#include "gpu_inputs.hpp"

namespace fs = std::filesystem;
using archfit::gpu_tests::fatbin_dir;
using archfit::gpu_tests::kernels_dir;
using archfit::gpu_tests::read_input;

namespace {

void cuda(cudaError_t error, const char* what) {
  if (error != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(error));
}

// One kernel as the bench runs it: its file, entry point, launch shape and
// parameters (pointers into buffers the bench allocates).
struct Case {
  std::string file;  // kernels/<file>.cu, <file>_sass.fatbin
  std::string entry;
  unsigned grid, block;
  std::vector<size_t> buffer_bytes;                                   // zeroed device buffers
  std::function<std::vector<void*>(std::vector<void*>&)> parameters;  // given the buffers' pointers
  std::string shape;                                                  // for the figure's line
};

struct Loaded {
  archfit_module* module = nullptr;
  archfit_loaded_module* loaded = nullptr;
  void* function = nullptr;
  std::string path, arch;
  ~Loaded() {
    archfit_loaded_module_destroy(loaded);
    archfit_module_destroy(module);
  }
};

void load(archfit_context* context, const Case& c, bool prebuilt, Loaded& out) {
  const std::string source = prebuilt ? "" : read_input(kernels_dir() / (c.file + ".cu"));
  const std::string image = prebuilt ? read_input(fatbin_dir() / (c.file + "_sass.fatbin")) : "";
  const std::string name = "bench." + c.file + (prebuilt ? ".nvcc" : ".nvrtc");
  const std::string source_name = c.file + ".cu";
  const char* entries[] = {c.entry.c_str()};
  archfit_module_desc desc{};
  desc.struct_size = sizeof desc;
  desc.name = name.c_str();
  desc.source = prebuilt ? nullptr : source.c_str();
  desc.source_name = source_name.c_str();
  desc.entry_points = entries;
  desc.entry_point_count = 1;
  desc.prebuilt = prebuilt ? image.data() : nullptr;
  desc.prebuilt_size = image.size();
  archfit_load_info info{};
  info.struct_size = sizeof info;
  if (archfit_module_create(context, &desc, &out.module) != ARCHFIT_OK ||
      archfit_module_load(out.module, 0, &out.loaded) != ARCHFIT_OK ||
      archfit_loaded_module_function(out.loaded, c.entry.c_str(), &out.function) != ARCHFIT_OK ||
      archfit_loaded_module_info(out.loaded, &info) != ARCHFIT_OK)
    throw std::runtime_error(name + ": " + archfit_last_error());
  out.path = info.path;
  out.arch = info.arch;
}

// Median microseconds per launch over `repeats` runs of 50 launches.
double time_launches(const Loaded& module, const Case& c, std::vector<void*>& parameters,
                     int repeats) {
  archfit_launch_config config{};
  config.struct_size = sizeof config;
  config.grid[0] = c.grid;
  config.block[0] = c.block;
  const auto launch = [&] {
    if (archfit_loaded_module_launch(module.loaded, module.function, &config, parameters.data()) !=
        ARCHFIT_OK)
      throw std::runtime_error(c.entry + ": " + archfit_last_error());
  };
  for (int i = 0; i < 10; ++i) launch();
  cuda(cudaDeviceSynchronize(), "warm-up");
  cudaEvent_t start, stop;
  cuda(cudaEventCreate(&start), "cudaEventCreate");
  cuda(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<double> runs;
  for (int r = 0; r < repeats; ++r) {
    cuda(cudaEventRecord(start), "cudaEventRecord");
    for (int i = 0; i < 50; ++i) launch();
    cuda(cudaEventRecord(stop), "cudaEventRecord");
    cuda(cudaEventSynchronize(stop), c.entry.c_str());
    float ms = 0;
    cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    runs.push_back(1000.0 * ms / 50);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

std::vector<Case> cases() {
  std::vector<Case> out;
  {  // Flux/DiT: 4096 tokens of 3072.
    static int cols = 3072;
    static float eps = 1e-6f;
    const size_t rows = 4096;
    out.push_back({"rmsnorm",
                   "rmsnorm_f32",
                   static_cast<unsigned>(rows),
                   256,
                   {rows * cols * 4, size_t(cols) * 4, rows * cols * 4},
                   [](std::vector<void*>& b) {
                     return std::vector<void*>{&b[0], &b[1], &b[2], &cols, &eps};
                   },
                   "4096 x 3072 f32"});
  }
  {  // An SD VAE decoder block: 512 channels of 128 x 128, 32 groups.
    static int channels = 512, hw = 128 * 128, groups = 32;
    static float eps = 1e-6f;
    const size_t values = size_t(channels) * hw;
    out.push_back({"groupnorm_silu",
                   "groupnorm_silu_f32",
                   32,
                   256,
                   {values * 4, size_t(channels) * 4, size_t(channels) * 4, values * 4},
                   [](std::vector<void*>& b) {
                     return std::vector<void*>{&b[0],     &b[1], &b[2],   &b[3],
                                               &channels, &hw,   &groups, &eps};
                   },
                   "1 x 512 x 128 x 128 f32, 32 groups"});
  }
  {  // A 3072 x 3072 weight in Q8_0 (34-byte blocks of 32) and Q4_K (144-byte blocks of 256).
    static long long q8_blocks = 3072LL * 3072 / 32, q4_blocks = 3072LL * 3072 / 256;
    out.push_back({"gguf_dequant",
                   "dequantize_q8_0_f16",
                   static_cast<unsigned>((q8_blocks * 32 + 255) / 256),
                   256,
                   {size_t(q8_blocks) * 34, size_t(q8_blocks) * 32 * 2},
                   [](std::vector<void*>& b) {
                     return std::vector<void*>{&b[0], &b[1], &q8_blocks};
                   },
                   "3072 x 3072 Q8_0 to f16"});
    out.push_back({"gguf_dequant",
                   "dequantize_q4_k_f16",
                   static_cast<unsigned>((q4_blocks * 128 + 255) / 256),
                   256,
                   {size_t(q4_blocks) * 144, size_t(q4_blocks) * 256 * 2},
                   [](std::vector<void*>& b) {
                     return std::vector<void*>{&b[0], &b[1], &q4_blocks};
                   },
                   "3072 x 3072 Q4_K to f16"});
  }
  {  // A 16 M-value fp8 tensor to bf16.
    static long long count = 16LL << 20;
    static float scale = 0.37f;
    out.push_back({"fp8_to_bf16",
                   "fp8_e4m3_to_bf16",
                   static_cast<unsigned>((count / 4 + 255) / 256),
                   256,
                   {size_t(count), size_t(count) * 2},
                   [](std::vector<void*>& b) {
                     return std::vector<void*>{&b[0], &b[1], &scale, &count};
                   },
                   "16 M e4m3 to bf16"});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 7;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--repeats") == 0) repeats = std::max(1, std::atoi(argv[i + 1]));
  int count = 0;
  const cudaError_t probe = cudaGetDeviceCount(&count);
  if (probe != cudaSuccess || count == 0) {
    std::printf("skipped: no CUDA GPU here (%s); run on a machine with one (tests/gpu/run.sh)\n",
                cudaGetErrorString(probe));
    return 0;
  }
  cudaDeviceProp properties{};
  cudaGetDeviceProperties(&properties, 0);
  // A scratch kernel cache: the NVRTC build is compiled here, not taken from a user's cache.
  const fs::path cache =
      fs::temp_directory_path() / ("archfit_speed_bench_" + std::to_string(::getpid()));
  ::setenv("ARCHFIT_CACHE_DIR", cache.c_str(), 1);
  archfit_context* context = nullptr;
  if (archfit_context_create(nullptr, &context) != ARCHFIT_OK) {
    std::fprintf(stderr, "archfit_context_create: %s\n", archfit_last_error());
    return 1;
  }
  std::printf("%s (sm_%d%d): median us per launch over %d x 50 launches\n", properties.name,
              properties.major, properties.minor, repeats);
  std::printf("%-22s %-36s %10s %10s %8s\n", "kernel", "shape", "nvcc", "nvrtc", "ratio");
  int status = 0;
  for (const Case& c : cases()) {
    try {
      std::vector<void*> buffers;
      for (const size_t bytes : c.buffer_bytes) {
        void* pointer = nullptr;
        cuda(cudaMalloc(&pointer, bytes), "cudaMalloc");
        cuda(cudaMemset(pointer, 0, bytes), "cudaMemset");
        buffers.push_back(pointer);
      }
      std::vector<void*> parameters = c.parameters(buffers);
      Loaded nvcc, nvrtc;
      load(context, c, true, nvcc);
      load(context, c, false, nvrtc);
      const double nvcc_us = time_launches(nvcc, c, parameters, repeats);
      const double nvrtc_us = time_launches(nvrtc, c, parameters, repeats);
      std::printf("%-22s %-36s %10.2f %10.2f %8.3f   (%s %s vs %s %s)\n", c.entry.c_str(),
                  c.shape.c_str(), nvcc_us, nvrtc_us, nvrtc_us / nvcc_us, nvcc.path.c_str(),
                  nvcc.arch.c_str(), nvrtc.path.c_str(), nvrtc.arch.c_str());
      for (void* pointer : buffers) cudaFree(pointer);
    } catch (const std::exception& error) {
      std::printf("%-22s failed: %s\n", c.entry.c_str(), error.what());
      status = 1;
    }
  }
  archfit_context_destroy(context);
  fs::remove_all(cache);
  return status;
}
