#pragma once
// A file's bytes, read-only, for the scanner (docs/design.md, decision 8:
// what the OS does differently lives in sys/, one implementation per OS).
// On Linux a private read-only mapping: the scanner touches only the pages
// of the headers it reads and of the data sections it searches.
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

#include "sys/file_stamp.hpp"

namespace archfit::sys {

class MappedFile {
 public:
  enum class Kind {
    mapped,   // a regular file of one byte or more: bytes() is the whole of it
    empty,    // a regular file of no bytes
    special,  // a device, socket or FIFO: holds no device code, never read
    failed,   // could not be opened, stat'ed or mapped: problem() says which and why
  };

  // Opening a FIFO does not wait for a writer.
  static MappedFile open(const std::filesystem::path& path);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  Kind kind() const { return kind_; }
  std::span<const std::byte> bytes() const { return {address_, length_}; }
  // "cannot open: No such file or directory"; "" unless kind() is failed.
  const std::string& problem() const { return problem_; }
  // The file actually opened, which is what bytes() holds: its stamp
  // (fstat) and the path the OS gives the open file, every link resolved
  // ("" where it gives none, or the file was deleted since). A path that
  // was a link to another file when it was stat'ed may lead here now: the
  // scan index (check/scan_index.hpp) keeps what was read under these.
  const FileStamp& stamp() const { return stamp_; }
  const std::string& real_path() const { return real_path_; }

 private:
  MappedFile() = default;
  void release();

  Kind kind_ = Kind::failed;
  const std::byte* address_ = nullptr;
  std::size_t length_ = 0;
  std::string problem_;
  FileStamp stamp_;
  std::string real_path_;
};

}  // namespace archfit::sys
