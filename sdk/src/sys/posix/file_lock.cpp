#include "sys/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace archfit::sys {

std::optional<FileLock> FileLock::take(const std::filesystem::path& path, Wait wait,
                                       std::string* error) {
  auto fail = [&](const char* what) -> std::optional<FileLock> {
    if (error) *error = std::string(what) + " " + path.string() + ": " + std::strerror(errno);
    return std::nullopt;
  };
  // A file removed between open and flock is retried; a handful of rounds
  // is plenty, the bound only guards against a pathological remover.
  for (int round = 0; round < 64; ++round) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return fail("cannot open lock file");
    int rc;
    do {
      rc = ::flock(fd, LOCK_EX | (wait == Wait::no ? LOCK_NB : 0));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      const int cause = errno;
      ::close(fd);
      errno = cause;
      if (cause == EWOULDBLOCK) return std::nullopt;
      return fail("cannot lock");
    }
    struct stat held {
    }, named{};
    if (::fstat(fd, &held) == 0 && ::lstat(path.c_str(), &named) == 0 &&
        held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
      return FileLock(fd, path);
    }
    ::close(fd);  // removed or replaced while we waited: lock the file there now
  }
  errno = EAGAIN;
  return fail("cannot keep hold of lock file");
}

FileLock::FileLock(FileLock&& other) noexcept
    : handle_(std::exchange(other.handle_, -1)), path_(std::move(other.path_)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (handle_ >= 0) ::close(static_cast<int>(handle_));
    handle_ = std::exchange(other.handle_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

FileLock::~FileLock() {
  if (handle_ >= 0) ::close(static_cast<int>(handle_));
}

void FileLock::remove_file() {
  if (handle_ >= 0) ::unlink(path_.c_str());
}

}  // namespace archfit::sys
