// RMSNorm over the last dimension: for each row of `cols` values,
//   y[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i]
// in float, half (__half) and bfloat16 (__nv_bfloat16); the sum of squares
// and the scaling are done in float whatever the element type.
//
// Launch: one block per row (grid.x = rows), block.x a multiple of 32 up to
// 1024, no dynamic shared memory. Entry points: the extern "C" kernels
// rmsnorm_f32 / rmsnorm_f16 / rmsnorm_bf16, or the name expressions
// rmsnorm<float>, rmsnorm<__half>, rmsnorm<__nv_bfloat16>.
// CPU reference: rmsnorm_reference.hpp.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace archfit_kernels {

// Loads and stores of each element type, through float.
template <typename T>
struct Element;
template <>
struct Element<float> {
  static __device__ __forceinline__ float load(float value) { return value; }
  static __device__ __forceinline__ float store(float value) { return value; }
};
template <>
struct Element<__half> {
  static __device__ __forceinline__ float load(__half value) { return __half2float(value); }
  static __device__ __forceinline__ __half store(float value) { return __float2half_rn(value); }
};
template <>
struct Element<__nv_bfloat16> {
  static __device__ __forceinline__ float load(__nv_bfloat16 value) {
    return __bfloat162float(value);
  }
  static __device__ __forceinline__ __nv_bfloat16 store(float value) {
    return __float2bfloat16_rn(value);
  }
};

__device__ __forceinline__ float warp_sum(float value) {
  for (int offset = 16; offset > 0; offset >>= 1)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

template <typename T>
__device__ __forceinline__ void rmsnorm_row(const T* __restrict__ x, const T* __restrict__ weight,
                                            T* __restrict__ y, int cols, float eps) {
  __shared__ float warp_sums[32];
  const T* in = x + static_cast<size_t>(blockIdx.x) * cols;
  T* out = y + static_cast<size_t>(blockIdx.x) * cols;

  float sum = 0.0f;
  for (int i = threadIdx.x; i < cols; i += blockDim.x) {
    const float value = Element<T>::load(in[i]);
    sum += value * value;
  }
  sum = warp_sum(sum);
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    const int warps = blockDim.x / 32;
    sum = warp_sum(lane < warps ? warp_sums[lane] : 0.0f);
    if (lane == 0) warp_sums[0] = sum;
  }
  __syncthreads();
  const float scale = rsqrtf(warp_sums[0] / static_cast<float>(cols) + eps);

  for (int i = threadIdx.x; i < cols; i += blockDim.x)
    out[i] = Element<T>::store(Element<T>::load(in[i]) * scale * Element<T>::load(weight[i]));
}

}  // namespace archfit_kernels

template <typename T>
__global__ void rmsnorm(const T* __restrict__ x, const T* __restrict__ weight, T* __restrict__ y,
                        int cols, float eps) {
  archfit_kernels::rmsnorm_row<T>(x, weight, y, cols, eps);
}

extern "C" __global__ void rmsnorm_f32(const float* __restrict__ x,
                                       const float* __restrict__ weight, float* __restrict__ y,
                                       int cols, float eps) {
  archfit_kernels::rmsnorm_row<float>(x, weight, y, cols, eps);
}

extern "C" __global__ void rmsnorm_f16(const __half* __restrict__ x,
                                       const __half* __restrict__ weight, __half* __restrict__ y,
                                       int cols, float eps) {
  archfit_kernels::rmsnorm_row<__half>(x, weight, y, cols, eps);
}

extern "C" __global__ void rmsnorm_bf16(const __nv_bfloat16* __restrict__ x,
                                        const __nv_bfloat16* __restrict__ weight,
                                        __nv_bfloat16* __restrict__ y, int cols, float eps) {
  archfit_kernels::rmsnorm_row<__nv_bfloat16>(x, weight, y, cols, eps);
}
