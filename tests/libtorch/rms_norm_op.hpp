#pragma once
// archfit_test::rms_norm, the torch op the adapter tests register: a CPU
// kernel (the reference, kernels/rmsnorm_reference.hpp) and a CUDA kernel
// that launches imagegen_ops.rmsnorm through archfit/torch.hpp, as an op
// author would write them.
#include <ATen/core/Tensor.h>

namespace archfit_test {

// Checks what both kernels need: x [rows, cols] and weight [cols], float32,
// contiguous, on one device. Errors are torch's (c10::Error), naming the argument.
void check_rms_norm_inputs(const at::Tensor& x, const at::Tensor& weight);

at::Tensor rms_norm_cpu(const at::Tensor& x, const at::Tensor& weight, double eps);
at::Tensor rms_norm_cuda(const at::Tensor& x, const at::Tensor& weight, double eps);

}  // namespace archfit_test
