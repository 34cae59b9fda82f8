// AdaLN modulation, the step DiT and Flux blocks take after each norm:
//   y[r][i] = x[r][i] * (1 + scale[i]) + shift[i]
// float32, row-major [rows, cols]. Launch: grid.x * block.x threads cover
// cols, grid.y = rows; no shared memory. Entry point: adaln_modulate_f32.
extern "C" __global__ void adaln_modulate_f32(const float* __restrict__ x,
                                              const float* __restrict__ scale,
                                              const float* __restrict__ shift,
                                              float* __restrict__ y, int rows, int cols) {
  const int row = blockIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows || col >= cols) return;
  const long long at = static_cast<long long>(row) * cols + col;
  y[at] = fmaf(x[at], 1.0f + scale[col], shift[col]);
}
