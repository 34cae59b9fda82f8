#include "sys/file_status.hpp"

#include "sys/utf8_path.hpp"
#include "sys/windows/file_identity.hpp"
#include "sys/windows/wide.hpp"

namespace archfit::sys {

using namespace archfit::sys::windows;

std::optional<FileStatus> file_status(const std::filesystem::path& path, Links links,
                                      StatusFailure* failure) {
  // Attributes only, so a file another process holds open, or one this
  // user may not read, still answers.
  const DWORD flags = FILE_FLAG_BACKUP_SEMANTICS |
                      (links == Links::not_followed ? FILE_FLAG_OPEN_REPARSE_POINT : 0);
  Handle file(::CreateFileW(os_path(path).c_str(), FILE_READ_ATTRIBUTES,
                            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                            OPEN_EXISTING, flags, nullptr));
  if (!file.valid()) {
    const DWORD code = ::GetLastError();
    if (failure) {
      failure->missing = is_missing(code);
      failure->name_too_long = code == ERROR_FILENAME_EXCED_RANGE;
      failure->reason = error_text(code);
    }
    return std::nullopt;
  }
  FileStatus status;
  if (!identify(file.get(), status)) {
    if (failure) failure->reason = error_text(::GetLastError());
    return std::nullopt;
  }
  return status;
}

std::string real_path(const std::string& path) {
  Handle file(::CreateFileW(os_path(path_of_utf8(path)).c_str(), FILE_READ_ATTRIBUTES,
                            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                            OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr));
  return file.valid() ? final_path(file.get()) : std::string();
}

}  // namespace archfit::sys
