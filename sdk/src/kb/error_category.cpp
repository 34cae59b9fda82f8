#include "kb/error_category.hpp"

#include <array>

namespace archfit::kb {

namespace {

constexpr std::array<ErrorCategoryFacts, 10> kCategories = {{
    {ErrorCategory::not_recognised, "not-recognised", false, "no error archfit knows"},
    {ErrorCategory::no_kernel_image, "no-kernel-image", true,
     "a kernel has no image the GPU can run"},
    {ErrorCategory::ptx_too_new_for_driver, "ptx-too-new-for-driver", false,
     "PTX of an ISA the driver does not know"},
    {ErrorCategory::driver_too_old, "driver-too-old", false,
     "the driver is older than the CUDA runtime needs"},
    {ErrorCategory::no_device, "no-device", false, "no usable GPU was found"},
    {ErrorCategory::invalid_device_function, "invalid-device-function", true,
     "a kernel launched has no image for the GPU"},
    {ErrorCategory::library_arch_mismatch, "library-arch-mismatch", true,
     "a CUDA library (cuBLAS, cuDNN, …) has no code for the GPU"},
    {ErrorCategory::compiler_unknown_arch, "compiler-unknown-arch", false,
     "a compiler does not know the GPU's architecture"},
    {ErrorCategory::async_error, "async-error", false,
     "an error raised later than the call that caused it"},
    {ErrorCategory::out_of_memory, "out-of-memory", false, "the GPU ran out of memory"},
}};

const ErrorCategoryFacts& facts_of(ErrorCategory category) {
  for (const auto& facts : kCategories) {
    if (facts.category == category) return facts;
  }
  return kCategories.front();
}

}  // namespace

std::span<const ErrorCategoryFacts> error_category_table() { return kCategories; }

std::string_view to_string(ErrorCategory category) { return facts_of(category).name; }

std::optional<ErrorCategory> error_category_from_string(std::string_view name) {
  for (const auto& facts : kCategories) {
    if (facts.name == name) return facts.category;
  }
  return std::nullopt;
}

bool is_about_architecture(ErrorCategory category) { return facts_of(category).about_architecture; }

}  // namespace archfit::kb
