#pragma once
// One version of a file on disk, as the OS reports it for the file actually
// opened (fstat) or found by a path (stat). A file rewritten in place changes
// its size, mtime or ctime (which no one can set back); one replaced, as pip
// replaces files, changes its inode.
#include <sys/stat.h>

#include <cstdint>

namespace archfit::sys {

struct FileStamp {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  uint64_t device = 0;
  uint64_t inode = 0;
  friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

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
