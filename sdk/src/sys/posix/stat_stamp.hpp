#pragma once
// A FileStamp from what stat says: for the POSIX side of sys/ only.
#include <sys/stat.h>

#include "sys/file_stamp.hpp"

namespace archfit::sys {

inline FileStamp stamp_of(const struct stat& info) {
  FileStamp stamp;
  stamp.size = static_cast<uint64_t>(info.st_size);
  stamp.mtime_ns = static_cast<int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
  stamp.ctime_ns = static_cast<int64_t>(info.st_ctim.tv_sec) * 1'000'000'000 + info.st_ctim.tv_nsec;
  stamp.device = static_cast<uint64_t>(info.st_dev);
  stamp.inode = static_cast<uint64_t>(info.st_ino);
  return stamp;
}

}  // namespace archfit::sys
