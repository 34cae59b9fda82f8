#pragma once
// The archfit.check/1 document (docs/check-json.md).
#include <nlohmann/json.hpp>

#include "check.hpp"

namespace archfit::check {

inline constexpr const char* kCheckSchema = "archfit.check/1";

nlohmann::json check_document(const CheckReport& report);

// compat's verdict table as the document's `verdicts`: each verdict's name
// with its `blocks`, `warns` and `meaning`, so a reader of any document —
// saved, or from another archfit — needs no list of its own.
nlohmann::json verdict_table_json();

}  // namespace archfit::check
