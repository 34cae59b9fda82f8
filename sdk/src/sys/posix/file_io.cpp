#include "sys/file_io.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

#include "sys/posix/stat_stamp.hpp"

namespace archfit::sys {

namespace fs = std::filesystem;

namespace {

std::string errno_text(const std::string& what, const fs::path& path, int cause) {
  return what + " " + path.string() + ": " + std::strerror(cause);
}

bool write_all(int fd, std::span<const std::byte> bytes) {
  const auto* data = reinterpret_cast<const char*>(bytes.data());
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

fs::path unique_temporary_path(const fs::path& dir, std::string_view stem) {
  static std::atomic<uint64_t> serial{0};
  return dir / (std::string(stem) + "." + std::to_string(::getpid()) + "." +
                std::to_string(serial++) + ".tmp");
}

std::string write_then_replace(const fs::path& temp, const fs::path& target,
                               std::initializer_list<std::span<const std::byte>> parts) {
  // O_NOFOLLOW with O_EXCL: a link planted at the temporary name is refused,
  // never written through.
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return errno_text("cannot create", temp, errno);
  bool ok = true;
  for (const auto& part : parts) {
    if (!(ok = write_all(fd, part))) break;
  }
  int cause = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    cause = errno;
  }
  if (ok && ::rename(temp.c_str(), target.c_str()) != 0) {
    ok = false;
    cause = errno;
  }
  if (ok) return "";
  ::unlink(temp.c_str());
  return errno_text("cannot write", target, cause);
}

std::string replace_whole_file(const fs::path& target, std::string_view text) {
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return errno_text("cannot open the folder", folder, errno);
  const std::string name = target.filename().string();
  const std::string temporary = "." + name + ".tmp-" + std::to_string(::getpid());
  // One left by a run that was killed: removed (a link is removed itself,
  // never followed).
  ::unlinkat(dir, temporary.c_str(), 0);
  const int file =
      ::openat(dir, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  const auto fail = [&](const std::string& what, const fs::path& path) {
    const int cause = errno;
    if (file >= 0) ::close(file);
    ::unlinkat(dir, temporary.c_str(), 0);
    ::close(dir);
    return errno_text(what, path, cause);
  };
  if (file < 0) return fail("cannot create", folder / temporary);
  if (!write_all(file, std::as_bytes(std::span(text.data(), text.size()))) || ::fsync(file) != 0)
    return fail("cannot write", folder / temporary);
  ::close(file);
  if (::renameat(dir, temporary.c_str(), dir, name.c_str()) != 0) {
    const int cause = errno;
    ::unlinkat(dir, temporary.c_str(), 0);
    ::close(dir);
    return errno_text("cannot replace", target, cause);
  }
  ::close(dir);
  return "";
}

std::optional<uint64_t> file_size_limit() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return std::nullopt;
  return static_cast<uint64_t>(limit.rlim_cur);
}

NoFollowFile NoFollowFile::open(const fs::path& path) {
  NoFollowFile file;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) {
      file.kind_ = Kind::missing;
    } else if (errno == ELOOP) {
      file.kind_ = Kind::link;
    } else {
      file.problem_ = std::strerror(errno);
    }
    return file;
  }
  file.handle_ = fd;
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    file.problem_ = std::strerror(errno);
    file.release();
    return file;
  }
  file.stamp_ = stamp_of(info);
  if (!S_ISREG(info.st_mode)) {
    file.kind_ = Kind::not_regular;
    file.release();
    return file;
  }
  file.kind_ = Kind::opened;
  return file;
}

void NoFollowFile::release() {
  if (handle_ >= 0) ::close(static_cast<int>(handle_));
  handle_ = -1;
}

bool NoFollowFile::read_at(std::span<std::byte> into, uint64_t offset, std::string* problem) const {
  auto* out = reinterpret_cast<char*>(into.data());
  size_t size = into.size();
  while (size > 0) {
    const ssize_t n = ::pread(static_cast<int>(handle_), out, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (problem) *problem = std::strerror(errno);
      return false;
    }
    out += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

void NoFollowFile::touch() const {
  if (handle_ >= 0) ::futimens(static_cast<int>(handle_), nullptr);
}

}  // namespace archfit::sys
