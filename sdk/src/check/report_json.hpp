#pragma once
// The archfit.check/1 document (docs/check-json.md).
#include <nlohmann/json.hpp>

#include "check.hpp"

namespace archfit::check {

inline constexpr const char* kCheckSchema = "archfit.check/1";

nlohmann::json check_document(const CheckReport& report);

}  // namespace archfit::check
