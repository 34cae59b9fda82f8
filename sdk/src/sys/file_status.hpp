#pragma once
// What a path is, asked of the OS without opening the file for reading:
// stat and lstat on POSIX; CreateFileW with FILE_FLAG_BACKUP_SEMANTICS (and
// FILE_FLAG_OPEN_REPARSE_POINT to see a link itself) and
// GetFileInformationByHandle on Windows. And the real path of a file, every
// link resolved: realpath on POSIX, GetFinalPathNameByHandleW on Windows.
#include <filesystem>
#include <optional>
#include <string>

#include "sys/file_stamp.hpp"

namespace archfit::sys {

enum class FileType {
  file,       // a regular file
  directory,  // a directory
  link,       // a symbolic link (a reparse point on Windows); only when links are not followed
  other,      // a FIFO, socket or device
};

struct FileStatus {
  FileType type = FileType::other;
  FileStamp stamp;
};

enum class Links { follow, not_followed };

// Why a path could not be asked about.
struct StatusFailure {
  bool missing = false;        // nothing at the path (or a folder on the way is missing)
  bool name_too_long = false;  // longer than the OS lets a program name a file
  std::string reason;          // the OS's words: "Permission denied"
};

// nullopt when the path cannot be asked about; then `failure`, if given, says why.
std::optional<FileStatus> file_status(const std::filesystem::path& path, Links links,
                                      StatusFailure* failure = nullptr);

// The absolute path of `path` with every link resolved; "" when it cannot be
// had (nothing there, no permission).
std::string real_path(const std::string& path);

// Whether the two paths name one file (one device and one id).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

// `path` as a library that takes narrow (char) paths can open it — NVRTC's
// -I, for one. POSIX: its bytes. Windows, where such a library reads the
// ANSI code page: the path when it is ASCII, else its short (8.3) form,
// which is ASCII where the volume keeps short names (NTFS system volumes
// do); else its UTF-8, which such a library will not find.
std::string path_for_narrow_libraries(const std::filesystem::path& path);

}  // namespace archfit::sys
