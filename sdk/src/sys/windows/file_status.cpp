#include "sys/file_status.hpp"

#include <algorithm>

#include "sys/utf8_path.hpp"
#include "sys/windows/file_identity.hpp"
#include "sys/windows/wide.hpp"

namespace archfit::sys {

using namespace archfit::sys::windows;

namespace {
constexpr size_t kLongestName = 255;
}  // namespace

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
      // NTFS and the others Windows formats hold names of at most 255
      // UTF-16 units; the error for a longer one varies (Wine says "not
      // found"), so the name itself decides, as ENAMETOOLONG does on Linux.
      const bool long_name = std::any_of(path.begin(), path.end(), [](const auto& part) {
        return part.native().size() > kLongestName;
      });
      failure->name_too_long = code == ERROR_FILENAME_EXCED_RANGE || long_name;
      failure->missing = is_missing(code) && !failure->name_too_long;
      failure->reason = failure->name_too_long && code != ERROR_FILENAME_EXCED_RANGE
                            ? error_text(ERROR_FILENAME_EXCED_RANGE)
                            : error_text(code);
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

std::string path_for_narrow_libraries(const std::filesystem::path& path) {
  const std::wstring& wide = path.native();
  const auto ascii = [](const std::wstring& text) {
    return std::all_of(text.begin(), text.end(), [](wchar_t c) { return c < 0x80; });
  };
  if (ascii(wide)) return utf8_of(path);
  const std::wstring os = os_path(path);
  const DWORD size = ::GetShortPathNameW(os.c_str(), nullptr, 0);
  if (size != 0) {
    std::wstring short_form(size, L'\0');
    const DWORD written = ::GetShortPathNameW(os.c_str(), short_form.data(), size);
    short_form.resize(written);
    const std::string text = path_from_os(short_form);
    if (written != 0 && written < size && ascii(to_wide(text))) return text;
  }
  return utf8_of(path);
}

}  // namespace archfit::sys
