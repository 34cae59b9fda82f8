// The op's test, in two parts (ctest runs each):
//   test_adaln cpu   the CPU reference on hand-worked values; the op's images
//                    as archfit reads them (SASS for the archs built, no PTX);
//                    the module registers with archfit.
//   test_adaln gpu   on device 0: archfit loads the module (prebuilt image or
//                    NVRTC) and the op's result matches the reference.
//                    Exits 77 (skipped) where no GPU or driver is there.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "adaln_op.hpp"

#if ADALN_TEST_HAS_CUDART
#include <cuda_runtime_api.h>
#endif

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

int cpu() {
  // [1, -2] * (1 + [0.5, -1]) + [0.25, 3] = [1.75, 3]; row [4, 0]: [6.25, 3].
  const auto y = adaln::modulate_reference({1.f, -2.f, 4.f, 0.f}, {0.5f, -1.f}, {0.25f, 3.f}, 2, 2);
  expect(y == std::vector<float>{1.75f, 3.f, 6.25f, 3.f}, "the reference gives hand-worked values");
  bool refused = false;
  try {
    adaln::modulate_reference({1.f}, {0.f, 0.f}, {0.f, 0.f}, 1, 2);
  } catch (const adaln::Error&) {
    refused = true;
  }
  expect(refused, "the reference refuses mismatched sizes");

  expect(adaln::kernel_source().find("adaln_modulate_f32") != std::string::npos,
         "the library carries the kernel's source");
  const std::string prebuilt = adaln::prebuilt_images();
  if (prebuilt.empty()) {
    std::printf("note: built without nvcc: no prebuilt images, archfit compiles the source\n");
  } else {
    // What archfit check would see in the op: which images, for which archs.
    archfit_context* context = nullptr;
    archfit_scan* scan = nullptr;
    expect(archfit_context_create(nullptr, &context) == ARCHFIT_OK, "an archfit context");
    expect(archfit_scan_buffer_run(context, prebuilt.data(), prebuilt.size(), "adaln.fatbin",
                                   nullptr, &scan) == ARCHFIT_OK,
           "archfit scans the prebuilt fatbin");
    std::string sass, ptx;
    for (size_t i = 0; scan && i < archfit_scan_image_count(scan); ++i) {
      archfit_image_info image{};
      image.struct_size = sizeof image;
      if (archfit_scan_image(scan, i, &image) != ARCHFIT_OK) continue;
      std::string& list = image.kind == ARCHFIT_IMAGE_PTX ? ptx : sass;
      list += (list.empty() ? "" : " ") + std::to_string(image.sm);
    }
    std::printf("prebuilt: SASS %s; PTX %s\n", sass.c_str(), ptx.empty() ? "none" : ptx.c_str());
    expect(sass == "80 86", "SASS for sm_80 and sm_86 exactly");
    expect(ptx.empty(), "no PTX: a newer GPU takes the NVRTC path");
    archfit_scan_destroy(scan);
    archfit_context_destroy(context);
  }
  try {
    adaln::Op op;
    expect(true, "the kernel module registers with archfit");
  } catch (const adaln::Error& error) {
    expect(false, error.what());
  }
  return failures == 0 ? 0 : 1;
}

int gpu() {
#if !ADALN_TEST_HAS_CUDART
  std::printf("skipped: built without the CUDA runtime, which this test allocates with\n");
  return 77;
#else
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n", cudaGetErrorString(cudaGetLastError()));
    return 77;
  }
  adaln::Op op;
  std::printf("loaded: %s\n", op.load(0).c_str());
  const int rows = 3, cols = 1000;
  std::vector<float> x(rows * cols), scale(cols), shift(cols);
  for (int i = 0; i < rows * cols; ++i) x[i] = std::sin(0.01f * i);
  for (int i = 0; i < cols; ++i) {
    scale[i] = 0.001f * i - 0.5f;
    shift[i] = std::cos(0.02f * i);
  }
  float *dx, *dscale, *dshift, *dy;
  cudaMalloc(reinterpret_cast<void**>(&dx), x.size() * 4);
  cudaMalloc(reinterpret_cast<void**>(&dscale), cols * 4);
  cudaMalloc(reinterpret_cast<void**>(&dshift), cols * 4);
  cudaMalloc(reinterpret_cast<void**>(&dy), x.size() * 4);
  cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dscale, scale.data(), cols * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dshift, shift.data(), cols * 4, cudaMemcpyHostToDevice);
  op.modulate(0, dx, dscale, dshift, dy, rows, cols, nullptr);
  std::vector<float> y(x.size());
  const cudaError_t copied = cudaMemcpy(y.data(), dy, y.size() * 4, cudaMemcpyDeviceToHost);
  expect(copied == cudaSuccess, std::string("the kernel ran: ") + cudaGetErrorString(copied));
  const auto expected = adaln::modulate_reference(x, scale, shift, rows, cols);
  double worst = 0;
  for (size_t i = 0; i < y.size(); ++i) worst = std::fmax(worst, std::fabs(y[i] - expected[i]));
  std::printf("largest difference from the reference: %g\n", worst);
  expect(worst < 1e-5, "the GPU result matches the reference");
  cudaFree(dx);
  cudaFree(dscale);
  cudaFree(dshift);
  cudaFree(dy);
  return failures == 0 ? 0 : 1;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  const std::string part = argc > 1 ? argv[1] : "cpu";
  try {
    if (part == "cpu") return cpu();
    if (part == "gpu") return gpu();
  } catch (const adaln::Error& error) {
    std::printf("FAIL %s\n", error.what());
    return 1;
  }
  std::fprintf(stderr, "usage: test_adaln cpu|gpu\n");
  return 2;
}
