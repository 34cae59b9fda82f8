#pragma once
// The one error type of the binary module: what was wrong, and where.
// Readers throw it; the scanner catches it per container or per file and
// turns it into a ScanProblem, so one bad container never hides the others.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "image.hpp"  // hex()

namespace archfit::binary {

class ScanError : public std::runtime_error {
 public:
  ScanError(uint64_t offset, const std::string& what)
      : std::runtime_error("at offset " + hex(offset) + ": " + what), offset_(offset) {}
  uint64_t offset() const { return offset_; }

 private:
  uint64_t offset_;
};

}  // namespace archfit::binary
