#pragma once
// CPU reference for groupnorm_silu.cu: the same formula, with the group's
// mean and variance in double. Header-only C++17, so a GPU test built by
// nvcc or a C++ compiler can use it. Element types other than float are
// compared through float: round x, gamma and beta to the element type
// first, run this on the rounded values, and allow the tolerance of the
// type below.
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace archfit::kernels {

// x and y are NCHW (batch, channels, hw = H*W), gamma and beta one value per
// channel; channels are split into `groups` groups of channels / groups.
// For each sample n and group g, over the group's channels and positions:
//   v = (x - mean_g) / sqrt(var_g + eps) * gamma[c] + beta[c]
//   y = v / (1 + exp(-v))
// var_g is the biased variance (divided by the count), as torch's GroupNorm.
inline std::vector<float> groupnorm_silu_reference(const std::vector<float>& x,
                                                   const std::vector<float>& gamma,
                                                   const std::vector<float>& beta,
                                                   std::size_t batch, std::size_t channels,
                                                   std::size_t hw, std::size_t groups, float eps) {
  if (groups == 0 || channels % groups != 0)
    throw std::invalid_argument("groupnorm_silu_reference: channels must be a multiple of groups");
  if (x.size() != batch * channels * hw || gamma.size() != channels || beta.size() != channels)
    throw std::invalid_argument(
        "groupnorm_silu_reference: x must hold batch*channels*hw values, gamma and beta channels");
  const std::size_t group_channels = channels / groups;
  const std::size_t count = group_channels * hw;
  std::vector<float> y(x.size());
  for (std::size_t n = 0; n < batch; ++n) {
    for (std::size_t g = 0; g < groups; ++g) {
      const std::size_t base = (n * channels + g * group_channels) * hw;
      double sum = 0;
      for (std::size_t i = 0; i < count; ++i) sum += x[base + i];
      const double mean = sum / static_cast<double>(count);
      double squares = 0;
      for (std::size_t i = 0; i < count; ++i) {
        const double deviation = x[base + i] - mean;
        squares += deviation * deviation;
      }
      const double inverse = 1.0 / std::sqrt(squares / static_cast<double>(count) + eps);
      for (std::size_t i = 0; i < count; ++i) {
        const std::size_t c = g * group_channels + i / hw;
        const double v = (x[base + i] - mean) * inverse * gamma[c] + beta[c];
        y[base + i] = static_cast<float>(v / (1.0 + std::exp(-v)));
      }
    }
  }
  return y;
}

// Largest acceptable |gpu - reference| / max(1, |reference|), per element
// type: float sums in another order and uses rsqrtf and expf (a few ulp
// each); half and bfloat16 round the output (10 and 7 mantissa bits) after
// float math.
inline constexpr double kGroupNormSiluToleranceF32 = 2e-5;
inline constexpr double kGroupNormSiluToleranceF16 = 2e-3;
inline constexpr double kGroupNormSiluToleranceBF16 = 1.6e-2;

}  // namespace archfit::kernels
