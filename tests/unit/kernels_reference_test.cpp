// The CPU references of the bundled image-generation kernels
// (kernels/*_reference.hpp) against values worked out by hand, and their
// number decoders against NVIDIA's own host conversions (cuda_fp16.h,
// cuda_fp8.h). The GPU tests (tests/gpu) judge each kernel by its reference,
// so a wrong reference would pass a wrong kernel: these tests pin the
// references to the formats and formulas themselves.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "fp8_to_bf16_reference.hpp"
#include "gguf_dequant_reference.hpp"
#include "groupnorm_silu_reference.hpp"

namespace k = archfit::kernels;

namespace {

// What NVIDIA's header makes of a half's bits, on the host.
float nvidia_half(std::uint16_t bits) {
  __half_raw raw;
  raw.x = bits;
  return __half2float(__half(raw));
}

// Appends a little-endian fp16 field.
void put_fp16(std::vector<std::uint8_t>& bytes, std::uint16_t bits) {
  bytes.push_back(static_cast<std::uint8_t>(bits & 0xff));
  bytes.push_back(static_cast<std::uint8_t>(bits >> 8));
}

// The Q4_K super-block of the hand-worked test: the 6-bit scales and mins
// chosen, packed into 12 bytes by hand below.
constexpr int kScales[8] = {1, 2, 3, 4, 17, 33, 50, 63};
constexpr int kMins[8] = {0, 1, 5, 63, 16, 2, 40, 7};

// scales 17 = 01 0001, 33 = 10 0001, 50 = 11 0010, 63 = 11 1111 and mins
// 16 = 01 0000, 2 = 00 0010, 40 = 10 1000, 7 = 00 0111 (top 2 | low 4 bits):
//   byte 0  = sc0  1 | top(sc4) 01 << 6 = 0x41
//   byte 1  = sc1  2 | top(sc5) 10 << 6 = 0x82
//   byte 2  = sc2  3 | top(sc6) 11 << 6 = 0xC3
//   byte 3  = sc3  4 | top(sc7) 11 << 6 = 0xC4
//   byte 4  = m0   0 | top(m4)  01 << 6 = 0x40
//   byte 5  = m1   1 | top(m5)  00 << 6 = 0x01
//   byte 6  = m2   5 | top(m6)  10 << 6 = 0x85
//   byte 7  = m3  63 | top(m7)  00 << 6 = 0x3F
//   byte 8  = low(sc4) 1 | low(m4) 0 << 4 = 0x01
//   byte 9  = low(sc5) 1 | low(m5) 2 << 4 = 0x21
//   byte 10 = low(sc6) 2 | low(m6) 8 << 4 = 0x82
//   byte 11 = low(sc7) F | low(m7) 7 << 4 = 0x7F
constexpr std::uint8_t kPackedScales[12] = {0x41, 0x82, 0xC3, 0xC4, 0x40, 0x01,
                                            0x85, 0x3F, 0x01, 0x21, 0x82, 0x7F};

// A Q4_K super-block with d and dmin (fp16 bits), the scales above, and
// quant byte 32c + l = (l % 16) in its low nibble, (15 - l % 16) in its high.
std::vector<std::uint8_t> q4_k_block(std::uint16_t d, std::uint16_t dmin) {
  std::vector<std::uint8_t> bytes(k::kQ4_KBlockBytes);
  bytes[0] = static_cast<std::uint8_t>(d & 0xff);  // little-endian fp16 d
  bytes[1] = static_cast<std::uint8_t>(d >> 8);
  bytes[2] = static_cast<std::uint8_t>(dmin & 0xff);  // and dmin
  bytes[3] = static_cast<std::uint8_t>(dmin >> 8);
  for (int i = 0; i < 12; ++i) bytes[4 + i] = kPackedScales[i];
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l)
      bytes[16 + 32 * c + l] = static_cast<std::uint8_t>((l % 16) | (15 - l % 16) << 4);
  return bytes;
}

}  // namespace

// --- fp16, the scale field of every GGUF block -----------------------------------

// Hand values pin the decoder to IEEE binary16; the sweep against cuda_fp16.h
// catches any pattern the hand values miss (subnormals, infinities, NaN).
TEST(KernelReference, Fp16BitsDecodeAsIeeeHalfAndAsNvidiasHeaderDoes) {
  EXPECT_EQ(k::fp16_bits_to_float(0x3C00), 1.0f);                   // exponent 15 = bias: 1.0
  EXPECT_EQ(k::fp16_bits_to_float(0x3800), 0.5f);                   // exponent 14: 2^-1
  EXPECT_EQ(k::fp16_bits_to_float(0xC000), -2.0f);                  // sign, exponent 16
  EXPECT_EQ(k::fp16_bits_to_float(0x3E00), 1.5f);                   // mantissa 0x200 = .5
  EXPECT_EQ(k::fp16_bits_to_float(0x7BFF), 65504.0f);               // largest: (2 - 2^-10) * 2^15
  EXPECT_EQ(k::fp16_bits_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(k::fp16_bits_to_float(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_TRUE(std::isinf(k::fp16_bits_to_float(0x7C00)));
  EXPECT_TRUE(std::isnan(k::fp16_bits_to_float(0x7E00)));
  EXPECT_TRUE(std::signbit(k::fp16_bits_to_float(0x8000)));
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float ours = k::fp16_bits_to_float(static_cast<std::uint16_t>(bits));
    const float nvidia = nvidia_half(static_cast<std::uint16_t>(bits));
    if (std::isnan(nvidia)) {
      EXPECT_TRUE(std::isnan(ours)) << std::hex << bits;
    } else {
      EXPECT_EQ(ours, nvidia) << std::hex << bits;
      EXPECT_EQ(std::signbit(ours), std::signbit(nvidia)) << std::hex << bits;
    }
  }
}

// --- Q8_0 -------------------------------------------------------------------------

// Three 34-byte blocks: a scale of 0.5, a negative scale, and a subnormal
// scale. Reading d big-endian, reading q unsigned, or striding by 32 or 36
// bytes each gives other values.
TEST(KernelReference, Q8_0BlocksByHand) {
  std::vector<std::uint8_t> bytes;
  put_fp16(bytes, 0x3800);  // block 0: d = 0.5 (bytes 00 38)
  for (int j = 0; j < 32; ++j) bytes.push_back(static_cast<std::uint8_t>(j - 16));
  bytes[2 + 3] = 127;       // q[3] = 127
  bytes[2 + 4] = 0x80;      // q[4] = -128
  put_fp16(bytes, 0xC000);  // block 1: d = -2.0
  for (int j = 0; j < 32; ++j) bytes.push_back(static_cast<std::uint8_t>(j));
  put_fp16(bytes, 0x0001);  // block 2: d = 2^-24, an fp16 subnormal
  for (int j = 0; j < 32; ++j) bytes.push_back(64);
  ASSERT_EQ(bytes.size(), 3 * k::kQ8_0BlockBytes);

  const auto y = k::dequantize_q8_0_reference(bytes);
  ASSERT_EQ(y.size(), 96u);
  EXPECT_EQ(y[0], -8.0f);   // 0.5 * (0 - 16)
  EXPECT_EQ(y[1], -7.5f);   // 0.5 * -15
  EXPECT_EQ(y[3], 63.5f);   // 0.5 * 127
  EXPECT_EQ(y[4], -64.0f);  // 0.5 * -128: the byte 0x80 is signed
  EXPECT_EQ(y[16], 0.0f);   // 0.5 * 0
  EXPECT_EQ(y[31], 7.5f);   // 0.5 * 15
  for (int j = 0; j < 32; ++j) {
    if (j != 3 && j != 4) EXPECT_EQ(y[j], 0.5f * static_cast<float>(j - 16)) << j;
  }
  EXPECT_EQ(y[32 + 1], -2.0f);    // -2 * 1
  EXPECT_EQ(y[32 + 5], -10.0f);   // -2 * 5
  EXPECT_EQ(y[32 + 31], -62.0f);  // -2 * 31
  // Block 2: 64 * 2^-24 = 2^-18 = 3.814697265625e-6.
  for (int j = 64; j < 96; ++j) EXPECT_EQ(y[j], 3.814697265625e-6f) << j;

  bytes.pop_back();  // 101 bytes: not whole blocks
  EXPECT_THROW(k::dequantize_q8_0_reference(bytes), std::invalid_argument);
  EXPECT_TRUE(k::dequantize_q8_0_reference({}).empty());
}

// --- Q4_K -------------------------------------------------------------------------

// The 6-bit unpacking of ggml's get_scale_min_k4 on the hand-packed bytes,
// then on bytes that each set one field's top bits alone: taking a min's top
// bits from byte j-4 (the scale's) instead of byte j, or a scale's from j,
// or shifting by other than 6 and 4, fails here.
TEST(KernelReference, Q4_KScalesAndMinsUnpackAsGgmlPacksThem) {
  for (int j = 0; j < 8; ++j) {
    int scale = -1, min = -1;
    k::q4_k_scale_min(kPackedScales, j, scale, min);
    EXPECT_EQ(scale, kScales[j]) << "sub-block " << j;
    EXPECT_EQ(min, kMins[j]) << "sub-block " << j;
  }
  const auto unpack = [](int byte, std::uint8_t value, int j) {
    std::uint8_t packed[12] = {};
    packed[byte] = value;
    int scale = -1, min = -1;
    k::q4_k_scale_min(packed, j, scale, min);
    return std::make_pair(scale, min);
  };
  // Top bits of byte 0 are scale 4's bits 4-5 (48), and nothing of sub-block 0.
  EXPECT_EQ(unpack(0, 0xC0, 4), std::make_pair(48, 0));
  EXPECT_EQ(unpack(0, 0xC0, 0), std::make_pair(0, 0));
  // Top bits of byte 4 are min 4's bits 4-5 (48); min 0 keeps only the low 6.
  EXPECT_EQ(unpack(4, 0xC0, 4), std::make_pair(0, 48));
  EXPECT_EQ(unpack(4, 0xC0, 0), std::make_pair(0, 0));
  // Byte 11: scale 7's low nibble 0xA, min 7's 0x5.
  EXPECT_EQ(unpack(11, 0x5A, 7), std::make_pair(10, 5));
  EXPECT_EQ(unpack(11, 0x5A, 3), std::make_pair(0, 0));
  // All ones: every scale and min is 63.
  std::uint8_t ones[12];
  std::fill(std::begin(ones), std::end(ones), 0xFF);
  for (int j = 0; j < 8; ++j) {
    int scale = -1, min = -1;
    k::q4_k_scale_min(ones, j, scale, min);
    EXPECT_EQ(scale, 63) << j;
    EXPECT_EQ(min, 63) << j;
  }
}

// A super-block built byte by byte: d = 1 (0x3C00), dmin = 0.5 (0x3800),
// scales sc = 1 2 3 4 17 33 50 63 and mins m = 0 1 5 63 16 2 40 7 (packed
// above), quant byte 32c + l = (l % 16) | (15 - l % 16) << 4. Value
// 64c + l takes the low nibble, q = l % 16, in sub-block 2c; value
// 64c + 32 + l the high nibble, q = 15 - l % 16, in sub-block 2c + 1; each
// is d * sc * q - dmin * m. A second block (d = 2, dmin = 0) checks the
// 144-byte stride. Swapping d and dmin, the nibbles, or the sub-block order,
// or unpacking the scales otherwise, gives other values.
TEST(KernelReference, Q4_KSuperBlockBuiltByteByByte) {
  std::vector<std::uint8_t> bytes = q4_k_block(0x3C00, 0x3800);
  ASSERT_EQ(bytes.size(), k::kQ4_KBlockBytes);
  const auto second = q4_k_block(0x4000, 0x0000);
  bytes.insert(bytes.end(), second.begin(), second.end());

  const auto y = k::dequantize_q4_k_reference(bytes);
  ASSERT_EQ(y.size(), 512u);
  EXPECT_EQ(y[0], 0.0f);             // c0 low,  l 0,  q 0,  sc 1,  m 0:  1*0 - 0.5*0
  EXPECT_EQ(y[5], 5.0f);             // c0 low,  l 5,  q 5:                1*5 - 0
  EXPECT_EQ(y[31], 15.0f);           // c0 low,  l 31, q 15:               1*15 - 0
  EXPECT_EQ(y[32], 29.5f);           // c0 high, l 0,  q 15, sc 2,  m 1:  2*15 - 0.5
  EXPECT_EQ(y[40], 13.5f);           // c0 high, l 8,  q 7:                2*7 - 0.5
  EXPECT_EQ(y[64], -2.5f);           // c1 low,  l 0,  q 0,  sc 3,  m 5:  0 - 2.5
  EXPECT_EQ(y[70], 15.5f);           // c1 low,  l 6,  q 6:                3*6 - 2.5
  EXPECT_EQ(y[96], 28.5f);           // c1 high, l 0,  q 15, sc 4,  m 63: 60 - 31.5
  EXPECT_EQ(y[111], -31.5f);         // c1 high, l 15, q 0:                0 - 31.5
  EXPECT_EQ(y[128], -8.0f);          // c2 low,  l 0,  q 0,  sc 17, m 16: 0 - 8
  EXPECT_EQ(y[131], 43.0f);          // c2 low,  l 3,  q 3:                51 - 8
  EXPECT_EQ(y[160], 494.0f);         // c2 high, l 0,  q 15, sc 33, m 2:  495 - 1
  EXPECT_EQ(y[175], -1.0f);          // c2 high, l 15, q 0:                0 - 1
  EXPECT_EQ(y[192], -20.0f);         // c3 low,  l 0,  q 0,  sc 50, m 40: 0 - 20
  EXPECT_EQ(y[193], 30.0f);          // c3 low,  l 1,  q 1:                50 - 20
  EXPECT_EQ(y[224], 941.5f);         // c3 high, l 0,  q 15, sc 63, m 7:  945 - 3.5
  EXPECT_EQ(y[255], -3.5f);          // c3 high, l 31, q 0:                0 - 3.5
  EXPECT_EQ(y[256 + 0], 0.0f);       // block 1: d 2, dmin 0: 2*1*0
  EXPECT_EQ(y[256 + 131], 102.0f);   // 2*17*3
  EXPECT_EQ(y[256 + 224], 1890.0f);  // 2*63*15
  EXPECT_EQ(y[256 + 111], 0.0f);     // 2*4*0, no min subtracted
  // Every value, from how the block was built (not from its bytes).
  for (int b = 0; b < 2; ++b) {
    const float d = b == 0 ? 1.0f : 2.0f, dmin = b == 0 ? 0.5f : 0.0f;
    for (int e = 0; e < 256; ++e) {
      const int c = e / 64, r = e % 64, l = r % 32;
      const int sub = 2 * c + (r < 32 ? 0 : 1);
      const int q = r < 32 ? l % 16 : 15 - l % 16;
      EXPECT_EQ(y[256 * b + e], d * kScales[sub] * q - dmin * kMins[sub]) << b << ":" << e;
    }
  }

  bytes.resize(200);
  EXPECT_THROW(k::dequantize_q4_k_reference(bytes), std::invalid_argument);
}

// --- fp8 e4m3 ---------------------------------------------------------------------

// Bit patterns worked by hand (sign | exponent, bias 7 | mantissa), then all
// 256 against cuda_fp8.h's own host conversion: a decoder with e5m2's
// layout, an infinity at S.1111.000 or a wrong subnormal scale fails.
TEST(KernelReference, Fp8E4m3BitPatternsByHandAndAsNvidiasHeaderDoes) {
  EXPECT_EQ(k::fp8_e4m3_to_float(0x00), 0.0f);
  EXPECT_EQ(k::fp8_e4m3_to_float(0x38), 1.0f);    // 0 0111 000: 1.000 * 2^(7-7)
  EXPECT_EQ(k::fp8_e4m3_to_float(0xB8), -1.0f);   // 1 0111 000
  EXPECT_EQ(k::fp8_e4m3_to_float(0x3C), 1.5f);    // 0 0111 100: 1.100b = 1.5
  EXPECT_EQ(k::fp8_e4m3_to_float(0x40), 2.0f);    // 0 1000 000: 2^1
  EXPECT_EQ(k::fp8_e4m3_to_float(0x77), 240.0f);  // 0 1110 111: 1.875 * 2^7
  EXPECT_EQ(k::fp8_e4m3_to_float(0x78), 256.0f);  // 0 1111 000: 2^8, not infinity
  EXPECT_EQ(k::fp8_e4m3_to_float(0x7E), 448.0f);  // 0 1111 110: 1.75 * 2^8, the largest
  EXPECT_EQ(k::fp8_e4m3_to_float(0xFE), -448.0f);
  EXPECT_EQ(k::fp8_e4m3_to_float(0x08), 0.015625f);       // 0 0001 000: 2^-6, smallest normal
  EXPECT_EQ(k::fp8_e4m3_to_float(0x01), 0.001953125f);    // 0 0000 001: 1/8 * 2^-6 = 2^-9
  EXPECT_EQ(k::fp8_e4m3_to_float(0x07), 0.013671875f);    // 0 0000 111: 7/8 * 2^-6
  EXPECT_TRUE(std::isnan(k::fp8_e4m3_to_float(0x7F)));    // 0 1111 111
  EXPECT_TRUE(std::isnan(k::fp8_e4m3_to_float(0xFF)));    // 1 1111 111
  EXPECT_TRUE(std::signbit(k::fp8_e4m3_to_float(0x80)));  // -0
  for (int bits = 0; bits < 256; ++bits) {
    const float nvidia = __half2float(
        __half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(bits), __NV_E4M3)));
    const float ours = k::fp8_e4m3_to_float(static_cast<std::uint8_t>(bits));
    if (std::isnan(nvidia)) {
      EXPECT_TRUE(std::isnan(ours)) << std::hex << bits;
    } else {
      EXPECT_EQ(ours, nvidia) << std::hex << bits;
    }
  }
}

// The scale multiplies each decoded value: 1 * 0.5, 448 * 0.5, 2^-9 * 0.5,
// 1.5 * -3; NaN stays NaN. A scale ignored or applied twice fails.
TEST(KernelReference, Fp8E4m3TimesTheTensorScale) {
  auto y = k::fp8_e4m3_to_bf16_reference({0x38, 0x7E, 0x01, 0x7F}, 0.5f);
  ASSERT_EQ(y.size(), 4u);
  EXPECT_EQ(y[0], 0.5f);
  EXPECT_EQ(y[1], 224.0f);
  EXPECT_EQ(y[2], 0.0009765625f);  // 2^-10
  EXPECT_TRUE(std::isnan(y[3]));
  y = k::fp8_e4m3_to_bf16_reference({0x3C}, -3.0f);
  EXPECT_EQ(y[0], -4.5f);
}

// --- GroupNorm + SiLU -------------------------------------------------------------

namespace {

// N = 1, C = 4, H*W = 2, 2 groups of 2 channels, eps = 2 (large, so that
// var + eps is a square):
//   group 0 (c0 = 0 2, c1 = 2 4): mean 2, deviations -2 0 0 2, biased
//     variance 8/4 = 2, sqrt(2 + 2) = 2, normalised -1 0 0 1;
//     v = gamma*n + beta with gamma 2 1, beta 1 0: -1 1 | 0 1
//   group 1 (c2 = 6 6, c3 = 6 6): mean 6, variance 0, normalised 0 0 0 0;
//     v = beta: -3 -3 | 2 2
// silu(v) = v / (1 + e^-v), e = 2.718281828:
//   silu(-1) = -1 / 3.718281828 = -0.268941421
//   silu(1)  = 1 - 0.268941421 = 0.731058579 (sigmoid(1) = 1 - sigmoid(-1))
//   silu(0)  = 0
//   silu(-3) = -3 / (1 + 20.08553692) = -0.142277620
//   silu(2)  = 2 / (1 + 0.135335283) = 1.761594156
// Statistics per channel (c0: mean 1, var 1), over the whole sample (mean 4),
// with the unbiased variance (8/3), with eps outside the square root, or
// gamma and beta per group instead of per channel all give other values.
const std::vector<float> kGnX = {0, 2, 2, 4, 6, 6, 6, 6};
const std::vector<float> kGnGamma = {2, 1, 5, 7};
const std::vector<float> kGnBeta = {1, 0, -3, 2};
const std::vector<double> kGnY = {-0.268941421, 0.731058579,  0.0,         0.731058579,
                                  -0.142277620, -0.142277620, 1.761594156, 1.761594156};

}  // namespace

TEST(KernelReference, GroupNormSiluByHand) {
  const auto y = k::groupnorm_silu_reference(kGnX, kGnGamma, kGnBeta, 1, 4, 2, 2, 2.0f);
  ASSERT_EQ(y.size(), kGnY.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], kGnY[i], 1e-6) << i;
}

// A second sample, each value 10 more: its own group statistics (mean 12 and
// 16, the same variances) give it the same output. Statistics over the
// batch would move both samples' means (to 7 and 11) and change both.
TEST(KernelReference, GroupNormSiluStatisticsArePerSample) {
  std::vector<float> x = kGnX;
  for (float value : kGnX) x.push_back(value + 10);
  const auto y = k::groupnorm_silu_reference(x, kGnGamma, kGnBeta, 2, 4, 2, 2, 2.0f);
  ASSERT_EQ(y.size(), 16u);
  for (size_t i = 0; i < 16; ++i) EXPECT_NEAR(y[i], kGnY[i % 8], 1e-6) << i;
}

TEST(KernelReference, GroupNormSiluRefusesShapesThatDoNotFit) {
  // 4 channels in 3 groups; x of the wrong size; gamma of the wrong size.
  EXPECT_THROW(k::groupnorm_silu_reference(kGnX, kGnGamma, kGnBeta, 1, 4, 2, 3, 1e-5f),
               std::invalid_argument);
  EXPECT_THROW(k::groupnorm_silu_reference(kGnX, kGnGamma, kGnBeta, 2, 4, 2, 2, 1e-5f),
               std::invalid_argument);
  EXPECT_THROW(k::groupnorm_silu_reference(kGnX, {1, 1}, kGnBeta, 1, 4, 2, 2, 1e-5f),
               std::invalid_argument);
  EXPECT_THROW(k::groupnorm_silu_reference(kGnX, kGnGamma, kGnBeta, 1, 4, 2, 0, 1e-5f),
               std::invalid_argument);
}

// --- tolerances ---------------------------------------------------------------------

// The GPU tests allow each output type one rounding of the reference's float:
// a tolerance tightened below half an ulp would fail a correct kernel, and
// this catches it by rounding values over the whole range with NVIDIA's own
// host conversions.
TEST(KernelReference, TolerancesAllowOneRoundingToTheOutputType) {
  std::mt19937 random(7);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-14, 15);  // fp16's normal range
  double worst_half = 0, worst_bf16 = 0;
  for (int i = 0; i < 200000; ++i) {
    const float v = std::ldexp(mantissa(random), exponent(random)) * (i % 2 ? -1.0f : 1.0f);
    if (std::abs(v) > 65504.0f) continue;
    const double scale = std::max(1.0, std::abs(1.0 * v));
    worst_half = std::max(worst_half, std::abs(__half2float(__float2half_rn(v)) - v) / scale);
    worst_bf16 =
        std::max(worst_bf16, std::abs(__bfloat162float(__float2bfloat16_rn(v)) - v) / scale);
  }
  EXPECT_LE(worst_half, k::kGgufDequantToleranceF16);
  EXPECT_LE(worst_bf16, k::kGgufDequantToleranceBF16);
  EXPECT_LE(worst_bf16, k::kFp8ToBf16ToleranceBF16);
  EXPECT_LE(worst_half, k::kGroupNormSiluToleranceF16);
  EXPECT_LE(worst_bf16, k::kGroupNormSiluToleranceBF16);
  // And they are not loose: within a few times half an ulp.
  EXPECT_GT(worst_half, k::kGgufDequantToleranceF16 / 2);
  EXPECT_GT(worst_bf16, k::kGgufDequantToleranceBF16 / 2);
}
