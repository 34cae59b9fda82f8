#include "sys/file_lock.hpp"

#include <utility>

#include "sys/file_status.hpp"
#include "sys/utf8_path.hpp"
#include "sys/windows/file_identity.hpp"
#include "sys/windows/wide.hpp"

namespace archfit::sys {

using namespace archfit::sys::windows;

// LockFileEx on the lock file's first byte. Windows releases it when the
// handle closes, also when its holder is killed, as flock on Linux.
std::optional<FileLock> FileLock::take(const std::filesystem::path& path, Wait wait,
                                       std::string* error) {
  auto fail = [&](const char* what, DWORD code) -> std::optional<FileLock> {
    if (error) *error = std::string(what) + " " + utf8_of(path) + ": " + error_text(code);
    return std::nullopt;
  };
  for (int round = 0; round < 64; ++round) {
    Handle file(::CreateFileW(os_path(path).c_str(), GENERIC_READ | GENERIC_WRITE,
                              FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                              OPEN_ALWAYS, FILE_FLAG_OPEN_REPARSE_POINT, nullptr));
    if (!file.valid()) return fail("cannot open lock file", ::GetLastError());
    OVERLAPPED first_byte{};
    const DWORD flags =
        LOCKFILE_EXCLUSIVE_LOCK | (wait == Wait::no ? LOCKFILE_FAIL_IMMEDIATELY : 0);
    if (!::LockFileEx(file.get(), flags, 0, 1, 0, &first_byte)) {
      const DWORD code = ::GetLastError();
      if (code == ERROR_LOCK_VIOLATION || code == ERROR_IO_PENDING) return std::nullopt;
      return fail("cannot lock", code);
    }
    FileStatus held;
    const auto named = file_status(path, Links::not_followed);
    if (identify(file.get(), held) && named && held.type == FileType::file &&
        held.stamp.device == named->stamp.device && held.stamp.inode == named->stamp.inode) {
      return FileLock(reinterpret_cast<intptr_t>(file.release()), path);
    }
    // Removed or replaced while we waited: lock the file there now.
  }
  return fail("cannot keep hold of lock file", ERROR_LOCK_VIOLATION);
}

FileLock::FileLock(FileLock&& other) noexcept
    : handle_(std::exchange(other.handle_, -1)), path_(std::move(other.path_)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (handle_ != -1) ::CloseHandle(reinterpret_cast<HANDLE>(handle_));
    handle_ = std::exchange(other.handle_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

FileLock::~FileLock() {
  if (handle_ != -1) ::CloseHandle(reinterpret_cast<HANDLE>(handle_));
}

void FileLock::remove_file() {
  if (handle_ != -1) ::DeleteFileW(os_path(path_).c_str());
}

}  // namespace archfit::sys
