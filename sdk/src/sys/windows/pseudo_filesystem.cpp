#include "sys/pseudo_filesystem.hpp"

namespace archfit::sys {

// Windows has no kernel pseudo-filesystems under its drive letters.
std::string pseudo_filesystem_of(const std::string&) { return ""; }

}  // namespace archfit::sys
