#pragma once
// A stock PyTorch install in miniature, from the libraries
// tests/fixtures/stacks.cmake links: torch whose extension module links
// libtorch_cuda.so, which links the nvidia-* wheels' libraries through
// DT_RPATH with $ORIGIN; nvidia-cufft with a libcufftw that nothing links;
// cusparseLt, a feature library; torchvision; the Requires-Dist lines that
// make them one stack. What the real wheels hold is the real-world tier's.
#include <filesystem>
#include <string>
#include <vector>

#include "fixture_site.hpp"

namespace archfit::testing {

inline std::filesystem::path stack_fixture(const std::string& relative) {
  return std::filesystem::path(ARCHFIT_FIXTURE_DIR) / "stack" / relative;
}

inline bool stack_fixtures_built() {
  return std::filesystem::exists(stack_fixture("torch_ext/_C.cpython-311-x86_64-linux-gnu.so"));
}

struct StockTorch {
  std::string version = "2.8.0";  // METADATA's
  // torch_cu128 | torch_cu124 | torch_cu130 | torch_cu126's libtorch_cuda.so;
  // cu126's links cuDNN, installed as nvidia-cudnn-cu12 9.10.2.21 (libcudnn.so.9
  // and the sub-library libcudnn_ops.so.9 it opens).
  std::string build = "cu128";
  std::string cuda = "12.8";  // torch/version.py's
  bool torchvision = true;
};

// torch, its nvidia-* wheels and (optionally) torchvision, as pip installs them.
inline void install_stock_torch(const FixtureSite& site, const StockTorch& torch = {}) {
  const std::string linux = "; platform_system == \"Linux\" and platform_machine == \"x86_64\"";
  const bool cuda13 = torch.build == "cu130";
  const std::string runtime = cuda13 ? "nvidia-cuda-runtime" : "nvidia-cuda-runtime-cu12";
  const std::string runtime_version = cuda13 ? "13.0.96" : "12.8.90";
  // CUDA 13's cuFFT (libcufft.so.12, linking cudart 13) for a CUDA 13
  // build, as torch's CUDA 13 wheels require it; CUDA 12's otherwise.
  const std::string cufft = cuda13 ? "nvidia-cufft" : "nvidia-cufft-cu12";
  const std::string cufft_version = cuda13 ? "12.0.0.61" : "11.3.3.83";
  const bool with_cudnn = torch.build == "cu126";
  std::vector<std::string> requires_dist = {"filelock",
                                            runtime + "==" + runtime_version + linux,
                                            cufft + "==" + cufft_version + linux,
                                            "nvidia-cusparselt-cu12==0.7.1" + linux,
                                            "triton==3.4.0" + linux,
                                            "optree>=0.13.0; extra == \"optree\""};
  if (with_cudnn) requires_dist.push_back("nvidia-cudnn-cu12==9.10.2.21" + linux);
  site.install(
      "torch", torch.version,
      {{"torch/_C.cpython-311-x86_64-linux-gnu.so",
        stack_fixture("torch_ext/_C.cpython-311-x86_64-linux-gnu.so")},
       {"torch/lib/libtorch_cuda.so", stack_fixture("torch_" + torch.build + "/libtorch_cuda.so")}},
      requires_dist);
  site.write("torch/version.py", "__version__ = '" + torch.version + "+" + torch.build +
                                     "'\ncuda: Optional[str] = '" + torch.cuda + "'\n");
  site.install(
      runtime, runtime_version,
      {{"nvidia/cuda_runtime/lib/" + std::string(cuda13 ? "libcudart.so.13" : "libcudart.so.12"),
        stack_fixture(cuda13 ? "cudart13/libcudart.so.13" : "cudart12/libcudart.so.12")}});
  if (cuda13) {
    site.install(cufft, cufft_version,
                 {{"nvidia/cufft/lib/libcufft.so.12", stack_fixture("cufft13/libcufft.so.12")}});
  } else {
    site.install(cufft, cufft_version,
                 {{"nvidia/cufft/lib/libcufft.so.11", stack_fixture("cufft/libcufft.so.11")},
                  {"nvidia/cufft/lib/libcufftw.so.11", stack_fixture("cufftw/libcufftw.so.11")}});
  }
  if (with_cudnn) {
    site.install(
        "nvidia-cudnn-cu12", "9.10.2.21",
        {{"nvidia/cudnn/lib/libcudnn.so.9", stack_fixture("cudnn/libcudnn.so.9")},
         {"nvidia/cudnn/lib/libcudnn_ops.so.9", stack_fixture("cudnn_ops/libcudnn_ops.so.9")}});
  }
  site.install("nvidia-cusparselt-cu12", "0.7.1",
               {{"nvidia/cusparselt/lib/libcusparseLt.so.0",
                 stack_fixture("cusparselt/libcusparseLt.so.0")}});
  if (torch.torchvision) {
    site.install("torchvision", "0.23.0",
                 {{"torchvision/_C.so", stack_fixture("torchvision/_C.so")}},
                 {"numpy", "torch (==" + torch.version + ")"});
  }
}

}  // namespace archfit::testing
