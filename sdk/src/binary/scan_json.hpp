#pragma once
// The archfit.scan/1 document (docs/scan-json.md).
#include <nlohmann/json.hpp>
#include <vector>

#include "image.hpp"

namespace archfit::binary {

inline constexpr const char* kScanSchema = "archfit.scan/1";

nlohmann::json to_json(const Image& image);
nlohmann::json to_json(const FileScan& scan);
nlohmann::json scan_document(const std::vector<FileScan>& files);

}  // namespace archfit::binary
