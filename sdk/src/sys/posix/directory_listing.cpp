#include "sys/directory_listing.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "sys/posix/stat_stamp.hpp"

namespace archfit::sys {

namespace {

DirectoryListing::Type listing_type_of(unsigned char d_type) {
  switch (d_type) {
    case DT_REG:
      return DirectoryListing::Type::file;
    case DT_DIR:
      return DirectoryListing::Type::directory;
    case DT_LNK:
      return DirectoryListing::Type::link;
    case DT_UNKNOWN:
      return DirectoryListing::Type::unknown;
    default:
      return DirectoryListing::Type::other;  // a FIFO, socket or device
  }
}

}  // namespace

DirectoryListing DirectoryListing::open(const std::filesystem::path& dir) {
  DirectoryListing listing;
  listing.handle_ = ::opendir(dir.c_str());
  if (listing.handle_ == nullptr) {
    listing.problem_ = std::strerror(errno);
    return listing;
  }
  struct stat info {};
  if (::fstat(::dirfd(static_cast<DIR*>(listing.handle_)), &info) == 0)
    listing.stamp_ = stamp_of(info);
  return listing;
}

std::optional<DirectoryListing::Entry> DirectoryListing::next() {
  if (handle_ == nullptr) return std::nullopt;
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(static_cast<DIR*>(handle_));
    if (!entry) {
      if (errno != 0) problem_ = std::strerror(errno);
      return std::nullopt;
    }
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    return Entry{name, listing_type_of(entry->d_type), static_cast<uint64_t>(entry->d_ino)};
  }
}

void DirectoryListing::release() {
  if (handle_ != nullptr) ::closedir(static_cast<DIR*>(handle_));
  handle_ = nullptr;
}

}  // namespace archfit::sys
