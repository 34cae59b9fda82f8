#pragma once
// Bytes in, images out: recognises a host ELF, a cubin, a fatbin or a PTX
// file and reports every device image in it. No I/O, no global state.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "image.hpp"

namespace archfit::binary {

struct ScanOptions {
  bool deep = false;  // decompress payloads and check them against their headers
  // Threads for one file's large data sections; 1 scans on the caller's thread.
  unsigned threads = 1;
};

FileScan scan_bytes(std::span<const std::byte> bytes, std::string path,
                    const ScanOptions& options = {});

}  // namespace archfit::binary
