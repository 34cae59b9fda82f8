#pragma once
// CPU reference for gguf_dequant.cu: ggml's Q8_0 and Q4_K blocks decoded to
// float, value by value, from the bytes as a .gguf file stores them. The
// layouts and the arithmetic are ggml's (block_q8_0 and block_q4_K in
// ggml/src/ggml-common.h; dequantize_row_q8_0, get_scale_min_k4 and
// dequantize_row_q4_K in ggml/src/ggml-quants.c, github.com/ggml-org/llama.cpp
// at commit 01243c587fec); gguf_dequant.cu spells the byte layout out.
// Header-only C++17. The kernels compute the same float values and round
// them once to half or bfloat16; compare with the tolerance of the type below.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace archfit::kernels {

// Q8_0: fp16 d and 32 int8 quants. Q4_K: fp16 d, fp16 dmin, 12 bytes of
// packed scales and mins, 128 bytes of 4-bit quants.
inline constexpr std::size_t kQ8_0BlockValues = 32;
inline constexpr std::size_t kQ8_0BlockBytes = 34;
inline constexpr std::size_t kQ4_KBlockValues = 256;
inline constexpr std::size_t kQ4_KBlockBytes = 144;

// An IEEE binary16 value from its bits, exactly (every half is a float).
inline float fp16_bits_to_float(std::uint16_t bits) {
  const float sign = (bits & 0x8000u) ? -1.0f : 1.0f;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  if (exponent == 0x1f)
    return mantissa ? std::numeric_limits<float>::quiet_NaN()
                    : sign * std::numeric_limits<float>::infinity();
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);  // subnormal
  return sign * std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
}

// A little-endian fp16 field.
inline float gguf_fp16_at(const std::uint8_t* bytes) {
  return fp16_bits_to_float(static_cast<std::uint16_t>(bytes[0] | bytes[1] << 8));
}

// Sub-block j's (0..7) 6-bit scale and min from a Q4_K super-block's 12
// packed scale bytes: j < 4 in the low 6 bits of bytes j and j+4; j >= 4
// with their low 4 bits in byte j+4 (scale low nibble, min high nibble) and
// their top 2 bits in the top 2 bits of bytes j-4 (scale) and j (min).
inline void q4_k_scale_min(const std::uint8_t* scales, int j, int& scale, int& min) {
  if (j < 4) {
    scale = scales[j] & 63;
    min = scales[j + 4] & 63;
  } else {
    scale = (scales[j + 4] & 15) | ((scales[j - 4] >> 6) << 4);
    min = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

// Q8_0: value j of a block = d * q[j].
inline std::vector<float> dequantize_q8_0_reference(const std::vector<std::uint8_t>& blocks) {
  if (blocks.size() % kQ8_0BlockBytes != 0)
    throw std::invalid_argument("dequantize_q8_0_reference: not a whole number of 34-byte blocks");
  const std::size_t count = blocks.size() / kQ8_0BlockBytes;
  std::vector<float> y(count * kQ8_0BlockValues);
  for (std::size_t b = 0; b < count; ++b) {
    const std::uint8_t* block = blocks.data() + b * kQ8_0BlockBytes;
    const float d = gguf_fp16_at(block);
    for (std::size_t j = 0; j < kQ8_0BlockValues; ++j)
      y[b * kQ8_0BlockValues + j] = d * static_cast<float>(static_cast<std::int8_t>(block[2 + j]));
  }
  return y;
}

// Q4_K: value 64c + l (l < 32) is the low nibble of quant byte 32c + l, in
// sub-block 2c; value 64c + 32 + l its high nibble, in sub-block 2c + 1;
// value = (d * scale) * q - (dmin * min), in float.
inline std::vector<float> dequantize_q4_k_reference(const std::vector<std::uint8_t>& blocks) {
  if (blocks.size() % kQ4_KBlockBytes != 0)
    throw std::invalid_argument("dequantize_q4_k_reference: not a whole number of 144-byte blocks");
  const std::size_t count = blocks.size() / kQ4_KBlockBytes;
  std::vector<float> y(count * kQ4_KBlockValues);
  for (std::size_t b = 0; b < count; ++b) {
    const std::uint8_t* block = blocks.data() + b * kQ4_KBlockBytes;
    const float d = gguf_fp16_at(block);
    const float dmin = gguf_fp16_at(block + 2);
    const std::uint8_t* scales = block + 4;
    const std::uint8_t* quants = block + 16;
    float* out = y.data() + b * kQ4_KBlockValues;
    for (int chunk = 0; chunk < 4; ++chunk) {
      int scale = 0, min = 0;
      q4_k_scale_min(scales, 2 * chunk, scale, min);
      const float d_low = d * static_cast<float>(scale), m_low = dmin * static_cast<float>(min);
      q4_k_scale_min(scales, 2 * chunk + 1, scale, min);
      const float d_high = d * static_cast<float>(scale), m_high = dmin * static_cast<float>(min);
      for (int l = 0; l < 32; ++l) {
        const int q = quants[32 * chunk + l];
        out[64 * chunk + l] = d_low * static_cast<float>(q & 15) - m_low;
        out[64 * chunk + 32 + l] = d_high * static_cast<float>(q >> 4) - m_high;
      }
    }
  }
  return y;
}

// Largest acceptable |gpu - reference| / max(1, |reference|), per output
// type: the GPU computes the same float and rounds it once, to within half
// an ulp: 2^-11 for half (10 mantissa bits), 2^-8 for bfloat16 (7).
inline constexpr double kGgufDequantToleranceF16 = 4.9e-4;
inline constexpr double kGgufDequantToleranceBF16 = 3.91e-3;

}  // namespace archfit::kernels
