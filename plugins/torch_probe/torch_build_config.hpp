#pragma once
// What libtorch says about how it was built (at::show_config(), the text
// behind torch.__config__.show()), read into the facts archfit judges: the
// arch flags torch's own kernels were compiled for and the CUDA and cuDNN
// it was built with. A CPU-only build has none of them.
//
// Measured with torch 2.7.1+cu126 on a machine without a driver: the text
// then holds only the "Build settings" line (CUDA_VERSION, CUDNN_VERSION,
// USE_CUDA=ON); the CUDA lines, "NVCC architecture flags" among them, are
// printed only where a CUDA device is usable (tests/data/torch/README.md).
// Kept apart from the plugin so that the reading is tested without libtorch.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace archfit::torch_probe {

struct TorchBuildConfig {
  std::optional<std::string> torch_version;  // "2.7.1" (Build settings' TORCH_VERSION)
  std::optional<std::string> cuda_version;   // "12.6": the CUDA runtime torch was built with
  std::optional<std::string> cudnn_version;  // "9.5.1" (Build settings' CUDNN_VERSION)
  // The `code=` targets of "NVCC architecture flags", in order, each once:
  // "sm_50" (SASS) … "compute_90" (PTX). Empty for a CPU-only build.
  std::vector<std::string> cuda_archs;
  // A CUDA build: USE_CUDA=ON, a CUDA_VERSION, a "CUDA Runtime" line or arch flags.
  bool cuda = false;
};

// Never throws; lines it does not know are ignored.
TorchBuildConfig read_show_config(std::string_view text);

}  // namespace archfit::torch_probe
