// The bundled image-generation kernels (kernels/groupnorm_silu.cu,
// gguf_dequant.cu, fp8_to_bf16.cu) through archfit's NVRTC path: each
// compiles without a warning, and on a GPU no prebuilt image covers (a
// simulated RTX 5090 of the test-only driver, tests/fakes/, which finds
// kernels by name in the cubin's symbol table as the real driver does)
// every entry point its header documents is a kernel of the compiled
// module. NvrtcCompile.EveryKernelForEverySupportedArchScansAsThatArch
// (jit_nvrtc_test.cpp) compiles every kernels/*.cu for every arch.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "jit/kernel_module.hpp"
#include "jit/nvrtc/nvrtc.hpp"
#include "jit/nvrtc/nvrtc_discovery.hpp"
#include "saved_env.hpp"

namespace fs = std::filesystem;
using archfit::jit::JitError;
using archfit::jit::JitPath;
using archfit::jit::KernelModule;
using archfit::jit::KernelModuleSpec;

namespace {

struct BundledKernel {
  const char* file;
  std::vector<std::string> entry_points;
};

// The extern "C" entry points each kernel's header comment lists.
const std::vector<BundledKernel> kKernels = {
    {"groupnorm_silu.cu", {"groupnorm_silu_f32", "groupnorm_silu_f16", "groupnorm_silu_bf16"}},
    {"gguf_dequant.cu",
     {"dequantize_q8_0_f16", "dequantize_q8_0_bf16", "dequantize_q4_k_f16",
      "dequantize_q4_k_bf16"}},
    {"fp8_to_bf16.cu", {"fp8_e4m3_to_bf16"}},
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The toolkit's NVRTC; the tests skip without one.
const archfit::jit::Nvrtc* toolkit_nvrtc() {
  static const std::optional<archfit::jit::Nvrtc> nvrtc =
      []() -> std::optional<archfit::jit::Nvrtc> {
    archfit::jit::NvrtcSearch search;
    search.default_toolkit = fs::path(ARCHFIT_CUDA_LIB_DIR).parent_path();
    try {
      return archfit::jit::Nvrtc::discover(search);
    } catch (const archfit::jit::NvrtcError&) {
      return std::nullopt;
    }
  }();
  return nvrtc ? &*nvrtc : nullptr;
}

class KernelNvrtc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!toolkit_nvrtc()) GTEST_SKIP() << "no libnvrtc in the toolkit to compile with";
    dir_ = fs::temp_directory_path() / ("archfit_kernels_nvrtc_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    archfit::jit::JitSettings settings;
    settings.libcuda = ARCHFIT_FAKE_CUDA;
    settings.cache.emplace();
    settings.cache->dir = dir_ / "cache";
    settings.cache->on_warning = [](const std::string&) {};
    runtime_ = std::make_shared<archfit::jit::JitRuntime>(settings);
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_MODULE_LOAD");
    archfit::testing::unset_env("ARCHFIT_FAKE_CUDA_INIT");
    archfit::testing::set_env("ARCHFIT_FAKE_CUDA_VERSION", "13000");
    archfit::testing::set_env("ARCHFIT_FAKE_CUDA_DEVICES", "NVIDIA GeForce RTX 5090,12.0,1");
  }
  void TearDown() override {
    runtime_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  archfit::testing::SavedEnv saved_{"ARCHFIT_FAKE_CUDA_DEVICES", "ARCHFIT_FAKE_CUDA_INIT",
                                    "ARCHFIT_FAKE_CUDA_MODULE_LOAD", "ARCHFIT_FAKE_CUDA_VERSION"};
  fs::path dir_;
  std::shared_ptr<archfit::jit::JitRuntime> runtime_;  // the fake libcuda, a cache of its own
};

}  // namespace

// A warning in NVRTC's log (an unused variable, a narrowing, a deprecated
// intrinsic) fails here, with the log.
TEST_F(KernelNvrtc, EachKernelCompilesWithoutAWarning) {
  const archfit::jit::Nvrtc& nvrtc = *toolkit_nvrtc();
  for (const auto& kernel : kKernels) {
    for (const int sm :
         {nvrtc.info().supported_archs.front(), nvrtc.info().supported_archs.back()}) {
      archfit::jit::CompileRequest request;
      request.source = read_text(fs::path(ARCHFIT_KERNELS_DIR) / kernel.file);
      request.source_name = kernel.file;
      request.target = "sm_" + std::to_string(sm);
      const auto result = nvrtc.compile(request);
      EXPECT_TRUE(result.log.empty()) << kernel.file << " for " << request.target << ":\n"
                                      << result.log;
      EXPECT_FALSE(result.image.empty()) << kernel.file;
    }
  }
}

// A name the kernel does not define (a typo here or there, a kernel left
// out of extern "C" and so mangled) is not found by the driver and fails.
TEST_F(KernelNvrtc, EveryEntryPointIsAKernelOnAGpuNoPrebuiltImageCovers) {
  for (const auto& kernel : kKernels) {
    KernelModuleSpec spec;
    spec.name = std::string("test.") + kernel.file;
    spec.source = read_text(fs::path(ARCHFIT_KERNELS_DIR) / kernel.file);
    spec.source_name = kernel.file;
    spec.entry_points = kernel.entry_points;
    KernelModule module(spec, runtime_);
    const auto loaded = module.load(0);
    EXPECT_EQ(loaded->report().path, JitPath::nvrtc) << kernel.file;
    EXPECT_EQ(loaded->report().arch, "sm_120") << kernel.file;
    for (const auto& entry : kernel.entry_points) {
      void* function = nullptr;
      EXPECT_NO_THROW(function = loaded->function(entry)) << kernel.file << ": " << entry;
      EXPECT_NE(function, nullptr) << kernel.file << ": " << entry;
    }
  }
  // The driver does look the name up: one that no kernel defines is refused.
  KernelModuleSpec spec;
  spec.name = "test.groupnorm_silu";
  spec.source = read_text(fs::path(ARCHFIT_KERNELS_DIR) / "groupnorm_silu.cu");
  spec.source_name = "groupnorm_silu.cu";
  spec.entry_points = {"groupnorm_silu_f64"};
  KernelModule module(spec, runtime_);
  EXPECT_THROW(module.load(0)->function("groupnorm_silu_f64"), JitError);
}
