#pragma once
// adaln_modulate: y = x * (1 + scale) + shift over rows of `cols` floats,
// on the GPU through archfit, with a CPU reference to check it against.
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <archfit/archfit.hpp>

namespace adaln {

// What went wrong, with archfit's own reason (archfit::Error's message,
// archfit_last_error()).
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The CPU reference: the same formula in float.
std::vector<float> modulate_reference(const std::vector<float>& x, const std::vector<float>& scale,
                                      const std::vector<float>& shift, std::size_t rows,
                                      std::size_t cols);

// The op's CUDA source and its prebuilt fatbin (empty when built without
// nvcc), as the library carries them.
std::string kernel_source();
std::string prebuilt_images();

// The op's kernel module, registered once per process with archfit; loads
// on each device when first asked (a prebuilt image, or NVRTC).
class Op {
 public:
  Op();  // throws Error

  // Loads the module on device `ordinal` and says how: "prebuilt-sass sm_86: …"
  // or "nvrtc sm_120: No prebuilt image runs on sm_120 …". Throws Error
  // where it cannot load (no GPU, no driver, no NVRTC for that arch).
  std::string load(int ordinal);

  // y = x * (1 + scale) + shift with device pointers, on `stream` (a
  // cudaStream_t; nullptr: the default stream) of device `ordinal`.
  void modulate(int ordinal, const float* x, const float* scale, const float* shift, float* y,
                int rows, int cols, void* stream);

 private:
  // archfit.hpp's owners free each handle; they go in reverse: the loaded
  // module, then the module, then the context both came from.
  archfit::Context context_;
  archfit::Module module_;
  std::optional<archfit::LoadedModule> loaded_;  // on loaded_ordinal_
  int loaded_ordinal_ = -1;
  void* function_ = nullptr;
};

}  // namespace adaln
