// GGUF (ggml) block dequantisation to half (__half) and bfloat16
// (__nv_bfloat16), for image-generation hosts that load GGUF-quantised
// diffusion models (Flux, SD3, ...): the quantised tensor comes in as raw
// block bytes, exactly as stored in the .gguf file, and goes out as one
// element per value, in order.
//
// The block layouts are ggml's: `block_q8_0` and `block_q4_K` in
// ggml/src/ggml-common.h, unpacked as `dequantize_row_q8_0`,
// `get_scale_min_k4` and `dequantize_row_q4_K` in ggml/src/ggml-quants.c do
// (github.com/ggml-org/llama.cpp, read at commit 01243c587fec). All fp16
// fields are little-endian.
//
// Q8_0, 34 bytes for 32 values:
//   bytes 0-1   d, fp16
//   bytes 2-33  q[0..31], int8
//   value j = d * q[j]
//
// Q4_K, 144 bytes for a super-block of 256 values, in 8 sub-blocks of 32:
//   bytes 0-1     d, fp16: the scale of the sub-block scales
//   bytes 2-3     dmin, fp16: the scale of the sub-block mins
//   bytes 4-15    s[0..11]: eight 6-bit scales sc[j] and eight 6-bit mins m[j]
//                   j < 4:  sc[j] = s[j] & 63,  m[j] = s[j+4] & 63
//                   j >= 4: sc[j] = (s[j+4] & 15) | (s[j-4] >> 6) << 4
//                           m[j]  = (s[j+4] >> 4) | (s[j]   >> 6) << 4
//                 (the low 4 bits of sc/m 4..7 in s[8..11], their top 2 bits in
//                 the top 2 bits of s[0..3] and s[4..7])
//   bytes 16-143  qs[0..127], two 4-bit quants a byte: for c = 0..3 and
//                 l = 0..31, qs[32c + l] holds value 64c + l in its low
//                 nibble (sub-block 2c) and value 64c + 32 + l in its high
//                 nibble (sub-block 2c + 1)
//   value in sub-block j with quant q = (d * sc[j]) * q - (dmin * m[j])
// computed in float in that order, each product and the difference rounded
// on its own (no fused multiply-add), as ggml's C reference does.
//
// Launch: any grid and block (a grid-stride loop); for instance block.x =
// 256 and grid.x = ceil(work / 256), where work is 32 * blocks for Q8_0 (a
// thread per value) and 128 * blocks for Q4_K (a thread per quant byte, two
// values). Entry points (extern "C"), each
//   (const unsigned char* blocks, T* y, long long block_count):
// dequantize_q8_0_f16, dequantize_q8_0_bf16, dequantize_q4_k_f16,
// dequantize_q4_k_bf16. `blocks` needs no alignment. CPU reference:
// gguf_dequant_reference.hpp.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace archfit_kernels {

template <typename T>
struct DequantOutput;
template <>
struct DequantOutput<__half> {
  static __device__ __forceinline__ __half store(float value) { return __float2half_rn(value); }
};
template <>
struct DequantOutput<__nv_bfloat16> {
  static __device__ __forceinline__ __nv_bfloat16 store(float value) {
    return __float2bfloat16_rn(value);
  }
};

// A little-endian fp16 at any byte address.
__device__ __forceinline__ float gguf_fp16(const unsigned char* bytes) {
  const unsigned short bits =
      static_cast<unsigned short>(bytes[0] | static_cast<unsigned short>(bytes[1]) << 8);
  return __half2float(__ushort_as_half(bits));
}

constexpr int kQ8_0Values = 32;
constexpr int kQ8_0Bytes = 34;
constexpr int kQ4_KValues = 256;
constexpr int kQ4_KBytes = 144;

template <typename T>
__device__ __forceinline__ void dequantize_q8_0(const unsigned char* __restrict__ blocks,
                                                T* __restrict__ y, long long block_count) {
  const long long total = block_count * kQ8_0Values;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const unsigned char* block = blocks + (i / kQ8_0Values) * kQ8_0Bytes;
    const float d = gguf_fp16(block);
    const int q = static_cast<signed char>(block[2 + i % kQ8_0Values]);
    y[i] = DequantOutput<T>::store(d * static_cast<float>(q));
  }
}

// Sub-block j's 6-bit scale and min from the 12 packed bytes.
__device__ __forceinline__ void q4_k_scale_min(const unsigned char* s, int j, int& scale,
                                               int& minimum) {
  if (j < 4) {
    scale = s[j] & 63;
    minimum = s[j + 4] & 63;
  } else {
    scale = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
    minimum = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

template <typename T>
__device__ __forceinline__ void dequantize_q4_k(const unsigned char* __restrict__ blocks,
                                                T* __restrict__ y, long long block_count) {
  constexpr int kPairs = kQ4_KValues / 2;  // quant bytes per super-block
  const long long total = block_count * kPairs;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += stride) {
    const long long b = t / kPairs;
    const int byte = static_cast<int>(t % kPairs);
    const int chunk = byte / 32;  // values 64*chunk .. 64*chunk+63
    const int l = byte % 32;
    const unsigned char* block = blocks + b * kQ4_KBytes;
    const float d = gguf_fp16(block);
    const float dmin = gguf_fp16(block + 2);
    const unsigned char* scales = block + 4;
    const int q = block[16 + byte];

    int scale, minimum;
    q4_k_scale_min(scales, 2 * chunk, scale, minimum);
    const float d_low = __fmul_rn(d, static_cast<float>(scale));
    const float m_low = __fmul_rn(dmin, static_cast<float>(minimum));
    q4_k_scale_min(scales, 2 * chunk + 1, scale, minimum);
    const float d_high = __fmul_rn(d, static_cast<float>(scale));
    const float m_high = __fmul_rn(dmin, static_cast<float>(minimum));

    T* out = y + b * kQ4_KValues + 64 * chunk + l;
    out[0] =
        DequantOutput<T>::store(__fsub_rn(__fmul_rn(d_low, static_cast<float>(q & 15)), m_low));
    out[32] =
        DequantOutput<T>::store(__fsub_rn(__fmul_rn(d_high, static_cast<float>(q >> 4)), m_high));
  }
}

}  // namespace archfit_kernels

extern "C" __global__ void dequantize_q8_0_f16(const unsigned char* __restrict__ blocks,
                                               __half* __restrict__ y, long long block_count) {
  archfit_kernels::dequantize_q8_0<__half>(blocks, y, block_count);
}

extern "C" __global__ void dequantize_q8_0_bf16(const unsigned char* __restrict__ blocks,
                                                __nv_bfloat16* __restrict__ y,
                                                long long block_count) {
  archfit_kernels::dequantize_q8_0<__nv_bfloat16>(blocks, y, block_count);
}

extern "C" __global__ void dequantize_q4_k_f16(const unsigned char* __restrict__ blocks,
                                               __half* __restrict__ y, long long block_count) {
  archfit_kernels::dequantize_q4_k<__half>(blocks, y, block_count);
}

extern "C" __global__ void dequantize_q4_k_bf16(const unsigned char* __restrict__ blocks,
                                                __nv_bfloat16* __restrict__ y,
                                                long long block_count) {
  archfit_kernels::dequantize_q4_k<__nv_bfloat16>(blocks, y, block_count);
}
