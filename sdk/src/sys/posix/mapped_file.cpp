#include "sys/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "sys/posix/stat_stamp.hpp"

namespace archfit::sys {

namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// The path of the open file, from /proc/self/fd: what the kernel resolved
// when it was opened, whatever the path given leads to now.
std::string real_path_of(int fd) {
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  std::string target(4096, '\0');
  for (;;) {
    const ssize_t size = ::readlink(link.c_str(), target.data(), target.size());
    if (size < 0) return "";
    if (static_cast<size_t>(size) < target.size()) {
      target.resize(static_cast<size_t>(size));
      break;
    }
    if (target.size() >= (1u << 20)) return "";
    target.resize(target.size() * 2);
  }
  // Not a path any more: the file was deleted after it was opened.
  if (target.empty() || target[0] != '/' || target.ends_with(" (deleted)")) return "";
  return target;
}

}  // namespace

MappedFile MappedFile::open(const std::filesystem::path& path) {
  MappedFile file;
  const auto fail = [&file](const char* what) {
    file.kind_ = Kind::failed;
    file.problem_ = std::string(what) + ": " + std::strerror(errno);
    return std::move(file);
  };
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return fail("cannot open");
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return fail("cannot stat");
  file.stamp_ = stamp_of(info);
  if (S_ISREG(info.st_mode)) file.real_path_ = real_path_of(fd.get());
  if (!S_ISREG(info.st_mode)) {
    file.kind_ = Kind::special;
    return file;
  }
  if (info.st_size == 0) {
    file.kind_ = Kind::empty;
    return file;
  }
  void* address =
      ::mmap(nullptr, static_cast<size_t>(info.st_size), PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (address == MAP_FAILED) return fail("cannot map");
  file.kind_ = Kind::mapped;
  file.address_ = static_cast<const std::byte*>(address);
  file.length_ = static_cast<size_t>(info.st_size);
  return file;
}

void MappedFile::release() {
  if (address_ != nullptr)
    ::munmap(const_cast<std::byte*>(address_), length_);  // NOLINT: munmap takes void*
  address_ = nullptr;
  length_ = 0;
}

}  // namespace archfit::sys
