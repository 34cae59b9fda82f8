#include "adaln_op.hpp"

extern "C" {
extern const unsigned char adaln_source[];
extern const size_t adaln_source_size;
#if ADALN_HAS_PREBUILT
extern const unsigned char adaln_prebuilt[];
extern const size_t adaln_prebuilt_size;
#endif
}

namespace adaln {
namespace {

void check(archfit_status status, const std::string& what) {
  if (status != ARCHFIT_OK) throw Error("adaln: " + what + ": " + archfit_last_error());
}

}  // namespace

std::vector<float> modulate_reference(const std::vector<float>& x, const std::vector<float>& scale,
                                      const std::vector<float>& shift, std::size_t rows,
                                      std::size_t cols) {
  if (x.size() != rows * cols || scale.size() != cols || shift.size() != cols)
    throw Error("adaln: x must hold rows*cols values, scale and shift cols");
  std::vector<float> y(x.size());
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t i = 0; i < cols; ++i)
      y[r * cols + i] = x[r * cols + i] * (1.0f + scale[i]) + shift[i];
  return y;
}

std::string kernel_source() {
  return std::string(reinterpret_cast<const char*>(adaln_source), adaln_source_size);
}

std::string prebuilt_images() {
#if ADALN_HAS_PREBUILT
  return std::string(reinterpret_cast<const char*>(adaln_prebuilt), adaln_prebuilt_size);
#else
  return {};
#endif
}

Op::Op() {
  check(archfit_context_create(nullptr, &context_), "creating an archfit context");
  const std::string source = kernel_source();
  const std::string prebuilt = prebuilt_images();
  const char* entry_points[] = {"adaln_modulate_f32"};
  archfit_module_desc desc{};
  desc.struct_size = sizeof desc;
  desc.name = "sample.adaln_modulate";
  desc.source = source.c_str();
  desc.source_name = "adaln_modulate.cu";
  desc.entry_points = entry_points;
  desc.entry_point_count = 1;
  desc.prebuilt = prebuilt.empty() ? nullptr : prebuilt.data();
  desc.prebuilt_size = prebuilt.size();
  // archfit copies what it keeps: the strings above may go after this call.
  const archfit_status status = archfit_module_create(context_, &desc, &module_);
  if (status != ARCHFIT_OK) {
    const std::string reason = archfit_last_error();
    archfit_context_destroy(context_);
    throw Error("adaln: registering the kernel module: " + reason);
  }
}

Op::~Op() {
  archfit_loaded_module_destroy(loaded_);
  archfit_module_destroy(module_);
  archfit_context_destroy(context_);
}

std::string Op::load(int ordinal) {
  if (loaded_ordinal_ != ordinal) {
    archfit_loaded_module* loaded = nullptr;
    check(archfit_module_load(module_, ordinal, &loaded),
          "loading on device " + std::to_string(ordinal));
    void* function = nullptr;
    const archfit_status found = archfit_loaded_module_function(loaded, "adaln_modulate_f32", &function);
    if (found != ARCHFIT_OK) {
      const std::string reason = archfit_last_error();
      archfit_loaded_module_destroy(loaded);
      throw Error("adaln: looking up adaln_modulate_f32: " + reason);
    }
    archfit_loaded_module_destroy(loaded_);
    loaded_ = loaded;
    loaded_ordinal_ = ordinal;
    function_ = function;
  }
  archfit_load_info info{};
  info.struct_size = sizeof info;
  check(archfit_loaded_module_info(loaded_, &info), "asking how it loaded");
  return std::string(info.path) + " " + info.arch + ": " + info.reason;
}

void Op::modulate(int ordinal, const float* x, const float* scale, const float* shift, float* y,
                  int rows, int cols, void* stream) {
  load(ordinal);
  archfit_launch_config config{};
  config.struct_size = sizeof config;
  config.block[0] = 256;
  config.grid[0] = static_cast<uint32_t>((cols + 255) / 256);
  config.grid[1] = static_cast<uint32_t>(rows);
  config.stream = stream;
  void* parameters[] = {&x, &scale, &shift, &y, &rows, &cols};
  check(archfit_loaded_module_launch(loaded_, function_, &config, parameters), "launching");
}

}  // namespace adaln
