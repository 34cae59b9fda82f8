#include "file_scan.hpp"

#include "sys/mapped_file.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::binary {

FileScan scan_file(const std::filesystem::path& path, const ScanOptions& options,
                   OpenedFile* opened) {
  const sys::MappedFile file = sys::MappedFile::open(path);
  if (opened && file.kind() != sys::MappedFile::Kind::failed)
    *opened = {file.stamp(), file.real_path()};
  if (file.kind() == sys::MappedFile::Kind::mapped)
    return scan_bytes(file.bytes(), sys::utf8_of(path), options);
  FileScan scan;
  scan.path = sys::utf8_of(path);
  // A device, socket or FIFO, or an empty file, holds no device code.
  if (file.kind() == sys::MappedFile::Kind::failed) {
    scan.unreadable = true;
    scan.problems.push_back({0, file.problem()});
  }
  return scan;
}

}  // namespace archfit::binary
