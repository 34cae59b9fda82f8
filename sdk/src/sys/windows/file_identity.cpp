#include "sys/windows/file_identity.hpp"

#include <vector>

namespace archfit::sys::windows {

bool identify(HANDLE file, FileStatus& status) {
  BY_HANDLE_FILE_INFORMATION info{};
  if (!::GetFileInformationByHandle(file, &info)) return false;
  status.stamp.size = (static_cast<uint64_t>(info.nFileSizeHigh) << 32) | info.nFileSizeLow;
  status.stamp.mtime_ns = unix_ns(info.ftLastWriteTime);
  // The change time (metadata too, which no one can set back), as POSIX's
  // ctime; the last write time where the file system keeps none.
  FILE_BASIC_INFO basic{};
  status.stamp.ctime_ns =
      ::GetFileInformationByHandleEx(file, FileBasicInfo, &basic, sizeof basic) &&
              basic.ChangeTime.QuadPart != 0
          ? unix_ns(basic.ChangeTime)
          : status.stamp.mtime_ns;
  status.stamp.device = info.dwVolumeSerialNumber;
  status.stamp.inode = (static_cast<uint64_t>(info.nFileIndexHigh) << 32) | info.nFileIndexLow;
  const bool directory = (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
  status.type = directory ? FileType::directory : FileType::file;
  if ((info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0) {
    FILE_ATTRIBUTE_TAG_INFO tag{};
    if (::GetFileInformationByHandleEx(file, FileAttributeTagInfo, &tag, sizeof tag) &&
        (tag.ReparseTag == IO_REPARSE_TAG_SYMLINK || tag.ReparseTag == IO_REPARSE_TAG_MOUNT_POINT))
      status.type = FileType::link;
  } else if (!directory && ::GetFileType(file) != FILE_TYPE_DISK) {
    status.type = FileType::other;  // a pipe or a console
  }
  return true;
}

std::string final_path(HANDLE file) {
  std::vector<wchar_t> buffer(512);
  for (;;) {
    const DWORD size =
        ::GetFinalPathNameByHandleW(file, buffer.data(), static_cast<DWORD>(buffer.size()),
                                    FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
    if (size == 0) return "";
    if (size < buffer.size()) return path_from_os(std::wstring_view(buffer.data(), size));
    buffer.resize(size + 1);
  }
}

}  // namespace archfit::sys::windows
