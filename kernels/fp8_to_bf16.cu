// fp8 (e4m3, __nv_fp8_e4m3 storage: one byte a value) to bfloat16 with a
// per-tensor scale, as hosts load fp8-stored diffusion weights (Flux, SD3.5
// "fp8_e4m3fn" checkpoints) for a bf16 matmul:
//   y[i] = bf16(float(x[i]) * scale)
// e4m3 as OCP FP8 / torch.float8_e4m3fn: 1 sign, 4 exponent (bias 7) and 3
// mantissa bits, subnormals, no infinities, S.1111.111 is NaN (max 448).
// float(x) is exact (through fp16, which holds every e4m3 value); the
// product is rounded to float, then to bfloat16 (nearest, ties to even).
// NaN stays NaN.
//
// Launch: any grid and block (a grid-stride loop); each thread converts four
// values a step, with one 4-byte load and one 8-byte store when x is 4-byte
// and y 8-byte aligned (as any allocation is), else one value at a time;
// for instance block.x = 256 and grid.x = ceil(count / 4 / 256). Entry
// point (extern "C"):
//   fp8_e4m3_to_bf16(const __nv_fp8_e4m3* x, __nv_bfloat16* y, float scale,
//                    long long count)
// CPU reference: fp8_to_bf16_reference.hpp.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace archfit_kernels {

// Two e4m3 values (low byte first) as two floats, exactly.
__device__ __forceinline__ float2 e4m3x2_to_float2(__nv_fp8x2_storage_t pair) {
  const __half2 halves(__nv_cvt_fp8x2_to_halfraw2(pair, __NV_E4M3));
  return __half22float2(halves);
}

__device__ __forceinline__ void fp8_e4m3_to_bf16_run(const __nv_fp8_e4m3* __restrict__ x,
                                                     __nv_bfloat16* __restrict__ y, float scale,
                                                     long long count) {
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  // The same answer for every thread of the grid.
  const bool vector = (reinterpret_cast<unsigned long long>(x) & 3) == 0 &&
                      (reinterpret_cast<unsigned long long>(y) & 7) == 0;
  const long long quads = vector ? count / 4 : 0;
  for (long long v = first; v < quads; v += stride) {
    const unsigned int four = reinterpret_cast<const unsigned int*>(x)[v];
    const float2 low = e4m3x2_to_float2(static_cast<__nv_fp8x2_storage_t>(four & 0xffffu));
    const float2 high = e4m3x2_to_float2(static_cast<__nv_fp8x2_storage_t>(four >> 16));
    const __nv_bfloat162 out_low = __floats2bfloat162_rn(low.x * scale, low.y * scale);
    const __nv_bfloat162 out_high = __floats2bfloat162_rn(high.x * scale, high.y * scale);
    uint2 packed;
    packed.x = *reinterpret_cast<const unsigned int*>(&out_low);
    packed.y = *reinterpret_cast<const unsigned int*>(&out_high);
    reinterpret_cast<uint2*>(y)[v] = packed;
  }
  // What the vector loop left: the last count % 4 values, or all of them.
  for (long long i = quads * 4 + first; i < count; i += stride) {
    const float value = e4m3x2_to_float2(static_cast<__nv_fp8x2_storage_t>(x[i].__x)).x;
    y[i] = __float2bfloat16_rn(value * scale);
  }
}

}  // namespace archfit_kernels

extern "C" __global__ void fp8_e4m3_to_bf16(const __nv_fp8_e4m3* __restrict__ x,
                                            __nv_bfloat16* __restrict__ y, float scale,
                                            long long count) {
  archfit_kernels::fp8_e4m3_to_bf16_run(x, y, scale, count);
}
