#pragma once
// CPU reference for rmsnorm.cu: the same formula, with the sum of squares in
// double. Header-only C++17, so a GPU test built by nvcc or a C++ compiler
// can use it. Element types other than float are compared through float:
// round the inputs to the element type first, run this on the rounded
// values, and allow the tolerance of the type below.
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace archfit::kernels {

// y[r][i] = x[r][i] / sqrt(mean_i(x[r][i]^2) + eps) * weight[i], row-major.
inline std::vector<float> rmsnorm_reference(const std::vector<float>& x,
                                            const std::vector<float>& weight, std::size_t rows,
                                            std::size_t cols, float eps) {
  if (x.size() != rows * cols || weight.size() != cols)
    throw std::invalid_argument("rmsnorm_reference: x must hold rows*cols values and weight cols");
  std::vector<float> y(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    const float* in = x.data() + r * cols;
    double sum = 0;
    for (std::size_t i = 0; i < cols; ++i) sum += static_cast<double>(in[i]) * in[i];
    const double scale = 1.0 / std::sqrt(sum / static_cast<double>(cols) + eps);
    for (std::size_t i = 0; i < cols; ++i)
      y[r * cols + i] = static_cast<float>(in[i] * scale * weight[i]);
  }
  return y;
}

// Largest acceptable |gpu - reference| / max(1, |reference|), per element
// type: float sums in another order; half and bfloat16 round the output
// (10 and 7 mantissa bits) after float math.
inline constexpr double kRmsnormToleranceF32 = 1e-5;
inline constexpr double kRmsnormToleranceF16 = 2e-3;
inline constexpr double kRmsnormToleranceBF16 = 1.6e-2;

}  // namespace archfit::kernels
