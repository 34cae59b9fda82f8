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

// Runs `call` (archfit.hpp throws archfit::Error) and throws this op's Error,
// naming what failed, with archfit's reason.
template <typename Call>
auto checked(const std::string& what, Call&& call) -> decltype(call()) {
  try {
    return call();
  } catch (const archfit::Error& error) {
    throw Error("adaln: " + what + ": " + error.what());
  }
}

archfit::Module register_module(const archfit::Context& context) {
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
  return checked("registering the kernel module", [&] { return context.module(desc); });
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

Op::Op()
    : context_(checked("creating an archfit context", [] { return archfit::Context(); })),
      module_(register_module(context_)) {}

std::string Op::load(int ordinal) {
  if (loaded_ordinal_ != ordinal) {
    archfit::LoadedModule loaded = checked("loading on device " + std::to_string(ordinal),
                                           [&] { return module_.load(ordinal); });
    function_ = checked("looking up adaln_modulate_f32",
                        [&] { return loaded.function("adaln_modulate_f32"); });
    loaded_ = std::move(loaded);
    loaded_ordinal_ = ordinal;
  }
  const archfit_load_info info = checked("asking how it loaded", [&] { return loaded_->info(); });
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
  checked("launching", [&] { loaded_->launch(function_, config, parameters); });
}

}  // namespace adaln
