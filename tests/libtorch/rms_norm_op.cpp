#include "rms_norm_op.hpp"

#include <ATen/ATen.h>
#include <torch/library.h>

#include <vector>

#include "archfit/torch.hpp"
#include "rmsnorm_reference.hpp"

namespace archfit_test {

void check_rms_norm_inputs(const at::Tensor& x, const at::Tensor& weight) {
  TORCH_CHECK(x.dim() == 2, "rms_norm: x must be [rows, cols], got ", x.dim(), " dimensions");
  TORCH_CHECK(weight.dim() == 1 && weight.size(0) == x.size(1), "rms_norm: weight must be [",
              x.size(1), "], got ", weight.sizes());
  TORCH_CHECK(x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat,
              "rms_norm: x and weight must be float32, got ", x.scalar_type(), " and ",
              weight.scalar_type());
  TORCH_CHECK(x.device() == weight.device(), "rms_norm: x is on ", x.device(), ", weight on ",
              weight.device());
}

at::Tensor rms_norm_cpu(const at::Tensor& x, const at::Tensor& weight, double eps) {
  check_rms_norm_inputs(x, weight);
  const auto rows = static_cast<size_t>(x.size(0));
  const auto cols = static_cast<size_t>(x.size(1));
  const at::Tensor xc = x.contiguous();
  const at::Tensor wc = weight.contiguous();
  const std::vector<float> xs(xc.data_ptr<float>(), xc.data_ptr<float>() + rows * cols);
  const std::vector<float> ws(wc.data_ptr<float>(), wc.data_ptr<float>() + cols);
  const std::vector<float> ys =
      archfit::kernels::rmsnorm_reference(xs, ws, rows, cols, static_cast<float>(eps));
  at::Tensor y = at::empty_like(xc);
  std::copy(ys.begin(), ys.end(), y.data_ptr<float>());
  return y;
}

// kernels/rmsnorm.cu: one block per row, a multiple of 32 threads.
at::Tensor rms_norm_cuda(const at::Tensor& x, const at::Tensor& weight, double eps) {
  check_rms_norm_inputs(x, weight);
  // Never destroyed (archfit/torch.hpp): loaded per device on first use.
  static auto* module =
      new archfit::torch::Module(archfit::torch::Module::from_plugin("imagegen_ops.rmsnorm"));
  const at::Tensor xc = x.contiguous();
  const at::Tensor wc = weight.contiguous();
  at::Tensor y = at::empty_like(xc);
  const float* x_data = xc.data_ptr<float>();
  const float* w_data = wc.data_ptr<float>();
  float* y_data = y.data_ptr<float>();
  int cols = static_cast<int>(xc.size(1));
  float eps_f = static_cast<float>(eps);
  void* parameters[] = {&x_data, &w_data, &y_data, &cols, &eps_f};
  archfit::torch::LaunchShape shape;
  shape.grid[0] = static_cast<uint32_t>(xc.size(0));
  shape.block[0] = 256;
  module->launch(xc, "rmsnorm_f32", shape, parameters);
  return y;
}

}  // namespace archfit_test

TORCH_LIBRARY(archfit_test, m) { m.def("rms_norm(Tensor x, Tensor weight, float eps) -> Tensor"); }
TORCH_LIBRARY_IMPL(archfit_test, CPU, m) { m.impl("rms_norm", &archfit_test::rms_norm_cpu); }
TORCH_LIBRARY_IMPL(archfit_test, CUDA, m) { m.impl("rms_norm", &archfit_test::rms_norm_cuda); }
