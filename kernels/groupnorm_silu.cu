// Fused GroupNorm + SiLU over NCHW, the op at the heart of every VAE and UNet
// block: for each sample n and group g of `channels / groups` channels,
//   v = (x - mean_g) / sqrt(var_g + eps) * gamma[c] + beta[c]
//   y = silu(v) = v / (1 + exp(-v))
// with mean_g and the biased variance var_g over the group's channels and
// all `hw` = H*W positions, as torch.nn.GroupNorm computes them. Float, half
// (__half) and bfloat16 (__nv_bfloat16); the statistics (two passes: the
// mean, then the mean squared deviation from it) and the output math are in
// float whatever the element type.
//
// Launch: one block per (sample, group): grid.x = batch * groups, block.x a
// multiple of 32 up to 1024, no dynamic shared memory. `channels` must be a
// multiple of `groups`, and one group (channels / groups * hw values) must
// fit in an int. Entry points (extern "C"): groupnorm_silu_f32,
// groupnorm_silu_f16, groupnorm_silu_bf16, each
//   (const T* x, const T* gamma, const T* beta, T* y,
//    int channels, int hw, int groups, float eps)
// with gamma and beta of `channels` values. CPU reference:
// groupnorm_silu_reference.hpp.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace archfit_kernels {

// Loads and stores of each element type, through float.
template <typename T>
struct GroupNormElement;
template <>
struct GroupNormElement<float> {
  static __device__ __forceinline__ float load(float value) { return value; }
  static __device__ __forceinline__ float store(float value) { return value; }
};
template <>
struct GroupNormElement<__half> {
  static __device__ __forceinline__ float load(__half value) { return __half2float(value); }
  static __device__ __forceinline__ __half store(float value) { return __float2half_rn(value); }
};
template <>
struct GroupNormElement<__nv_bfloat16> {
  static __device__ __forceinline__ float load(__nv_bfloat16 value) {
    return __bfloat162float(value);
  }
  static __device__ __forceinline__ __nv_bfloat16 store(float value) {
    return __float2bfloat16_rn(value);
  }
};

__device__ __forceinline__ float groupnorm_warp_sum(float value) {
  for (int offset = 16; offset > 0; offset >>= 1)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// The sum of `value` over the block, returned to every thread. `scratch`
// holds 32 floats of shared memory; calls may follow one another.
__device__ __forceinline__ float groupnorm_block_sum(float value, float* scratch) {
  value = groupnorm_warp_sum(value);
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  __syncthreads();  // every thread has read the previous call's result
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  if (warp == 0) {
    const int warps = blockDim.x / 32;
    value = groupnorm_warp_sum(lane < warps ? scratch[lane] : 0.0f);
    if (lane == 0) scratch[0] = value;
  }
  __syncthreads();
  return scratch[0];
}

template <typename T>
__device__ __forceinline__ void groupnorm_silu_group(const T* __restrict__ x,
                                                     const T* __restrict__ gamma,
                                                     const T* __restrict__ beta, T* __restrict__ y,
                                                     int channels, int hw, int groups, float eps) {
  using E = GroupNormElement<T>;
  __shared__ float scratch[32];
  const int sample = blockIdx.x / groups;
  const int group = blockIdx.x % groups;
  const int group_channels = channels / groups;
  const int count = group_channels * hw;
  // A group's values are contiguous in NCHW: channels g*cpg .. g*cpg+cpg-1 of sample n.
  const size_t base =
      (static_cast<size_t>(sample) * channels + static_cast<size_t>(group) * group_channels) *
      static_cast<size_t>(hw);
  const T* in = x + base;
  T* out = y + base;

  float sum = 0.0f;
  for (int i = threadIdx.x; i < count; i += blockDim.x) sum += E::load(in[i]);
  const float mean = groupnorm_block_sum(sum, scratch) / static_cast<float>(count);

  float squares = 0.0f;
  for (int i = threadIdx.x; i < count; i += blockDim.x) {
    const float deviation = E::load(in[i]) - mean;
    squares += deviation * deviation;
  }
  const float variance = groupnorm_block_sum(squares, scratch) / static_cast<float>(count);
  const float inverse = rsqrtf(variance + eps);

  const int first_channel = group * group_channels;
  for (int i = threadIdx.x; i < count; i += blockDim.x) {
    const int channel = first_channel + i / hw;
    const float v =
        (E::load(in[i]) - mean) * inverse * E::load(gamma[channel]) + E::load(beta[channel]);
    out[i] = E::store(v / (1.0f + expf(-v)));
  }
}

}  // namespace archfit_kernels

extern "C" __global__ void groupnorm_silu_f32(const float* __restrict__ x,
                                              const float* __restrict__ gamma,
                                              const float* __restrict__ beta, float* __restrict__ y,
                                              int channels, int hw, int groups, float eps) {
  archfit_kernels::groupnorm_silu_group<float>(x, gamma, beta, y, channels, hw, groups, eps);
}

extern "C" __global__ void groupnorm_silu_f16(const __half* __restrict__ x,
                                              const __half* __restrict__ gamma,
                                              const __half* __restrict__ beta,
                                              __half* __restrict__ y, int channels, int hw,
                                              int groups, float eps) {
  archfit_kernels::groupnorm_silu_group<__half>(x, gamma, beta, y, channels, hw, groups, eps);
}

extern "C" __global__ void groupnorm_silu_bf16(const __nv_bfloat16* __restrict__ x,
                                               const __nv_bfloat16* __restrict__ gamma,
                                               const __nv_bfloat16* __restrict__ beta,
                                               __nv_bfloat16* __restrict__ y, int channels, int hw,
                                               int groups, float eps) {
  archfit_kernels::groupnorm_silu_group<__nv_bfloat16>(x, gamma, beta, y, channels, hw, groups,
                                                       eps);
}
