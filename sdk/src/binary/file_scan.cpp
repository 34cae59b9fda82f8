#include "file_scan.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace archfit::binary {

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

class Mapping {
 public:
  Mapping(void* address, size_t length) : address_(address), length_(length) {}
  ~Mapping() {
    if (address_ != MAP_FAILED) ::munmap(address_, length_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  bool ok() const { return address_ != MAP_FAILED; }
  std::span<const std::byte> bytes() const {
    return {static_cast<const std::byte*>(address_), length_};
  }

 private:
  void* address_;
  size_t length_;
};

FileScan failed(const std::filesystem::path& path, const std::string& what) {
  FileScan scan;
  scan.path = path.string();
  scan.unreadable = true;
  scan.problems.push_back({0, what + ": " + std::strerror(errno)});
  return scan;
}

}  // namespace

FileScan scan_file(const std::filesystem::path& path, const ScanOptions& options) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return failed(path, "cannot open");
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return failed(path, "cannot stat");
  if (!S_ISREG(info.st_mode)) {
    FileScan scan;
    scan.path = path.string();  // a device, socket or FIFO holds no device code
    return scan;
  }
  if (info.st_size == 0) {
    FileScan scan;
    scan.path = path.string();
    return scan;
  }
  // A read-only private mapping: the scanner touches only the pages of the
  // headers it reads and of the data sections it searches.
  Mapping mapping(
      ::mmap(nullptr, static_cast<size_t>(info.st_size), PROT_READ, MAP_PRIVATE, fd.get(), 0),
      static_cast<size_t>(info.st_size));
  if (!mapping.ok()) return failed(path, "cannot map");
  return scan_bytes(mapping.bytes(), path.string(), options);
}

}  // namespace archfit::binary
