#pragma once
// One version of a file on disk, as the OS reports it for the file actually
// opened or found by a path. A file rewritten in place changes its size,
// mtime or ctime (which no one can set back); one replaced, as pip replaces
// files, changes its id. POSIX fills it from stat (st_dev, st_ino, st_mtim,
// st_ctim); Windows from GetFileInformationByHandle (the volume's serial
// number, the file index, the last write and the change time).
#include <cstdint>

namespace archfit::sys {

struct FileStamp {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  uint64_t device = 0;  // the file system (POSIX st_dev; Windows the volume serial number)
  uint64_t inode = 0;   // the file on it (POSIX st_ino; Windows the file index)
  friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

}  // namespace archfit::sys
