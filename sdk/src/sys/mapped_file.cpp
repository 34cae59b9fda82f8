#include "sys/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

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

MappedFile::MappedFile(MappedFile&& other) noexcept { *this = std::move(other); }

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    kind_ = other.kind_;
    address_ = std::exchange(other.address_, nullptr);
    length_ = std::exchange(other.length_, 0);
    problem_ = std::move(other.problem_);
  }
  return *this;
}

MappedFile::~MappedFile() { release(); }

void MappedFile::release() {
  if (address_ != nullptr)
    ::munmap(const_cast<std::byte*>(address_), length_);  // NOLINT: munmap takes void*
  address_ = nullptr;
  length_ = 0;
}

}  // namespace archfit::sys
