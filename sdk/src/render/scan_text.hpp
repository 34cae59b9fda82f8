#pragma once
// The human-readable rendering of a scan.
#include <ostream>

#include "binary/tree_scan.hpp"

namespace archfit::render {

struct ScanTextOptions {
  bool images = false;     // one line per image
  bool deep = false;       // show what --deep found
  bool all_files = false;  // list files without device code too
  bool color = false;
};

void print_scan_text(std::ostream& out, const binary::TreeScan& scan, double elapsed_ms,
                     const ScanTextOptions& options);

}  // namespace archfit::render
