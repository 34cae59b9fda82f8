#pragma once
// The causes a CUDA error can have (errors.yaml's `category`), once, as the
// verdicts are in compat/verdict.hpp: the knowledge base checks each
// signature's category against this table, diagnose decides by the enum,
// and the JSON, the C ABI and the texts write its name.
#include <optional>
#include <span>
#include <string_view>

namespace archfit::kb {

enum class ErrorCategory {
  not_recognised,  // no signature matched: never written in errors.yaml
  no_kernel_image,
  ptx_too_new_for_driver,
  driver_too_old,
  no_device,
  invalid_device_function,
  library_arch_mismatch,
  compiler_unknown_arch,
  async_error,
  out_of_memory,
};

struct ErrorCategoryFacts {
  ErrorCategory category;
  std::string_view name;     // "no-kernel-image": the JSON's and errors.yaml's word
  bool about_architecture;   // the GPU's architecture is missing from some binary
  std::string_view meaning;  // in a phrase
};

// Every category once, not-recognised first.
std::span<const ErrorCategoryFacts> error_category_table();

// A string literal (NUL-terminated, static).
std::string_view to_string(ErrorCategory category);
std::optional<ErrorCategory> error_category_from_string(std::string_view name);

// The category says the device's architecture is missing from what ran:
// no-kernel-image, invalid-device-function, library-arch-mismatch.
bool is_about_architecture(ErrorCategory category);

}  // namespace archfit::kb
