#include "sys/file_status.hpp"

namespace archfit::sys {

// One device and one id, whichever OS filled them in.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  const auto left = file_status(a, Links::follow);
  const auto right = file_status(b, Links::follow);
  return left && right && left->stamp.device == right->stamp.device &&
         left->stamp.inode == right->stamp.inode;
}

}  // namespace archfit::sys
