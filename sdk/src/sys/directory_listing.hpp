#pragma once
// One directory's entries as the OS lists them, each with its name, its type
// as far as the listing tells it without a stat of the entry, and its file id,
// for the tree walk (binary/tree_scan). POSIX here: opendir and readdir
// (d_type, d_ino). On Windows: GetFileInformationByHandleEx with
// FileIdBothDirectoryInfo on the opened directory, which gives each entry's
// name, attributes (a reparse point is a link) and FileId in one pass.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "sys/file_stamp.hpp"

namespace archfit::sys {

class DirectoryListing {
 public:
  // What the listing says an entry is. `unknown` when the file system does
  // not say (some do not fill d_type): a stat tells.
  enum class Type { file, directory, link, other, unknown };

  struct Entry {
    std::string_view name;  // valid until the next call of next()
    Type type = Type::unknown;
    uint64_t file_id = 0;  // the inode number on POSIX (stat's st_ino)
  };

  // Opens `dir` for listing; problem() says why when it cannot be.
  static DirectoryListing open(const std::filesystem::path& dir);

  DirectoryListing(DirectoryListing&& other) noexcept;
  DirectoryListing& operator=(DirectoryListing&& other) noexcept;
  DirectoryListing(const DirectoryListing&) = delete;
  DirectoryListing& operator=(const DirectoryListing&) = delete;
  ~DirectoryListing();

  bool is_open() const { return handle_ != nullptr; }
  // The next entry, in the order the OS gives them, "." and ".." left out.
  // Empty at the end, when the directory could not be opened, or when
  // reading it failed part way; problem() is "" only in the first case.
  std::optional<Entry> next();
  // Why the directory could not be opened or read: the OS's reason, "No such
  // file or directory", "Permission denied". "" while all is well.
  const std::string& problem() const { return problem_; }
  // The directory actually opened (fstat of the open handle), which is the
  // one whose entries next() gives, even when the path named led elsewhere
  // when it was stat'ed: a listing is kept under this stamp. All zero when
  // it could not be opened.
  const FileStamp& stamp() const { return stamp_; }

 private:
  DirectoryListing() = default;
  void release();

  void* handle_ = nullptr;  // DIR* on POSIX
  std::string problem_;
  FileStamp stamp_;
};

}  // namespace archfit::sys
