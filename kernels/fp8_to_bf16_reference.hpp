#pragma once
// CPU reference for fp8_to_bf16.cu: e4m3 bytes decoded to float, times the
// per-tensor scale, in float. Header-only C++17. The kernel computes the same
// float product and rounds it once to bfloat16; compare with the tolerance
// below (and NaN with NaN).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace archfit::kernels {

// An e4m3 value (OCP FP8, torch.float8_e4m3fn) from its byte, exactly:
// sign bit 7, exponent bits 6-3 (bias 7), mantissa bits 2-0; exponent 0 is
// subnormal (mantissa * 2^-9); S.1111.111 is NaN and there is no infinity,
// so S.1111.110 = 448 is the largest magnitude.
inline float fp8_e4m3_to_float(std::uint8_t bits) {
  const float sign = (bits & 0x80u) ? -1.0f : 1.0f;
  const int exponent = (bits >> 3) & 0xf;
  const int mantissa = bits & 0x7;
  if (exponent == 0xf && mantissa == 0x7) return std::numeric_limits<float>::quiet_NaN();
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9);
  return sign * std::ldexp(static_cast<float>(mantissa | 0x8), exponent - 10);
}

// y[i] = float(x[i]) * scale.
inline std::vector<float> fp8_e4m3_to_bf16_reference(const std::vector<std::uint8_t>& x,
                                                     float scale) {
  std::vector<float> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = fp8_e4m3_to_float(x[i]) * scale;
  return y;
}

// Largest acceptable |gpu - reference| / max(1, |reference|): the one
// rounding to bfloat16, half an ulp of 7 mantissa bits (2^-8).
inline constexpr double kFp8ToBf16ToleranceBF16 = 3.91e-3;

}  // namespace archfit::kernels
