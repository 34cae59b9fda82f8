#pragma once
// The archfit.scan/1 document (docs/scan-json.md).
#include <nlohmann/json.hpp>
#include <vector>

#include "image.hpp"
#include "tree_scan.hpp"

namespace archfit::binary {

inline constexpr const char* kScanSchema = "archfit.scan/1";

nlohmann::json to_json(const Image& image);
nlohmann::json to_json(const FileScan& scan);
// `skipped`: what the walk did not follow (tree_scan.hpp), as "skipped".
nlohmann::json scan_document(const std::vector<FileScan>& files,
                             const std::vector<SkippedPath>& skipped = {});

}  // namespace archfit::binary
