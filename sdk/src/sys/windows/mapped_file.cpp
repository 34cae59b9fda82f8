#include "sys/mapped_file.hpp"

#include <utility>

#include "sys/windows/file_identity.hpp"
#include "sys/windows/wide.hpp"

namespace archfit::sys {

using namespace archfit::sys::windows;

// CreateFileW with every sharing mode, so that pip may replace or delete the
// file while it is read (the mapping keeps the bytes read); a view of the
// whole file, of which the scanner touches only the pages it reads.
MappedFile MappedFile::open(const std::filesystem::path& path) {
  MappedFile file;
  const auto fail = [&file](const char* what) {
    file.kind_ = Kind::failed;
    file.problem_ = std::string(what) + ": " + error_text(::GetLastError());
    return std::move(file);
  };
  Handle handle(::CreateFileW(os_path(path).c_str(), GENERIC_READ,
                              FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                              OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr));
  if (!handle.valid()) return fail("cannot open");
  FileStatus status;
  if (!identify(handle.get(), status)) return fail("cannot stat");
  file.stamp_ = status.stamp;
  if (status.type != FileType::file) {
    file.kind_ = Kind::special;
    return file;
  }
  file.real_path_ = final_path(handle.get());
  if (status.stamp.size == 0) {
    file.kind_ = Kind::empty;
    return file;
  }
  Handle mapping(::CreateFileMappingW(handle.get(), nullptr, PAGE_READONLY, 0, 0, nullptr));
  if (!mapping.valid()) return fail("cannot map");
  const void* address = ::MapViewOfFile(mapping.get(), FILE_MAP_READ, 0, 0, 0);
  if (address == nullptr) return fail("cannot map");
  file.kind_ = Kind::mapped;
  file.address_ = static_cast<const std::byte*>(address);
  file.length_ = static_cast<size_t>(status.stamp.size);
  return file;
}

void MappedFile::release() {
  if (address_ != nullptr) ::UnmapViewOfFile(address_);
  address_ = nullptr;
  length_ = 0;
}

}  // namespace archfit::sys
