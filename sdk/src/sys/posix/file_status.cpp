#include "sys/file_status.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "sys/posix/stat_stamp.hpp"

namespace archfit::sys {

namespace {

FileType file_type_of(mode_t mode) {
  if (S_ISREG(mode)) return FileType::file;
  if (S_ISDIR(mode)) return FileType::directory;
  if (S_ISLNK(mode)) return FileType::link;
  return FileType::other;
}

}  // namespace

std::optional<FileStatus> file_status(const std::filesystem::path& path, Links links,
                                      StatusFailure* failure) {
  struct stat info {};
  const int rc =
      links == Links::follow ? ::stat(path.c_str(), &info) : ::lstat(path.c_str(), &info);
  if (rc != 0) {
    if (failure) {
      failure->missing = errno == ENOENT || errno == ENOTDIR;
      failure->name_too_long = errno == ENAMETOOLONG;
      failure->reason = std::strerror(errno);
    }
    return std::nullopt;
  }
  return FileStatus{file_type_of(info.st_mode), stamp_of(info)};
}

std::string real_path(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
  return real ? std::string(real.get()) : std::string();
}

std::string path_for_narrow_libraries(const std::filesystem::path& path) { return path.string(); }

}  // namespace archfit::sys
