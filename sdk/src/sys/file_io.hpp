#pragma once
// Whole files written so that a reader sees all of one or none of it, and
// files read without following a link at their path: the kernel cache's
// entries (store/disk_store). POSIX here: open(O_CREAT|O_EXCL|O_NOFOLLOW,
// 0600), write, rename over the target; open(O_NOFOLLOW), fstat, pread.
// On Windows: CreateFileW with CREATE_NEW and an owner-only security
// descriptor, WriteFile, MoveFileExW(MOVEFILE_REPLACE_EXISTING); reading with
// FILE_FLAG_OPEN_REPARSE_POINT (a reparse point is refused) and ReadFile at
// an offset.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sys/file_stamp.hpp"

namespace archfit::sys {

// A name for a temporary file in `dir` that no other process and no other
// call in this one is given: <dir>/<stem>.<process id>.<n>.tmp.
std::filesystem::path unique_temporary_path(const std::filesystem::path& dir,
                                            std::string_view stem);

// Writes `parts`, one after the other, to `temp`, a new file created
// exclusively (a file or link already there is refused, never followed or
// truncated), readable and writable by its owner only; then renames it onto
// `target`, replacing any file there in one step. `temp` must be beside
// `target` (one file system). Returns "" on success. Otherwise `temp` is
// removed unless it was never created, and the error names the path:
// "cannot create <temp>: <reason>" when `temp` cannot be created, "cannot
// write <target>: <reason>" when writing, closing or renaming fails.
// Nothing is synced to disk (no fsync): after a power cut `target` may hold
// a torn file, so a caller that cannot accept one checks what it reads.
std::string write_then_replace(const std::filesystem::path& temp,
                               const std::filesystem::path& target,
                               std::initializer_list<std::span<const std::byte>> parts);

// Writes `text` as the whole of `target`, for a file others read while it
// is rewritten (node-feature-discovery's feature file): readers see the old
// file or the new one, never part of it. The text goes to a temporary file
// beside it, ".<name>.tmp-<process id>" (readers that pass over dot files
// never see it), made new without following a link (one left by a killed
// run is removed first), synced to disk and renamed onto `target`. On POSIX
// both steps are relative to the folder opened once, so a link swapped in
// for the folder meanwhile leads nowhere. Returns "" on success, else why
// not, naming the path: "cannot create /x/.f.tmp-12: Permission denied".
std::string replace_whole_file(const std::filesystem::path& target, std::string_view text);

// This process's limit on the size of a file it writes, in bytes; empty
// when there is none. Writing past it raises SIGXFSZ on POSIX.
std::optional<uint64_t> file_size_limit();

// A regular file opened for reading where a symbolic link at its path is
// not followed.
class NoFollowFile {
 public:
  enum class Kind {
    opened,       // a regular file: size(), info() and read_at() may be used
    missing,      // nothing at the path
    link,         // a symbolic link at the path: not opened
    not_regular,  // a directory, device, FIFO or socket
    failed,       // could not be opened or stat'ed: problem() says why
  };

  static NoFollowFile open(const std::filesystem::path& path);

  NoFollowFile(NoFollowFile&& other) noexcept;
  NoFollowFile& operator=(NoFollowFile&& other) noexcept;
  NoFollowFile(const NoFollowFile&) = delete;
  NoFollowFile& operator=(const NoFollowFile&) = delete;
  ~NoFollowFile();

  Kind kind() const { return kind_; }
  // The reason, "Permission denied"; "" unless kind() is failed.
  const std::string& problem() const { return problem_; }
  // The open file's stamp (fstat; GetFileInformationByHandle).
  const FileStamp& stamp() const { return stamp_; }
  uint64_t size() const { return stamp_.size; }
  // The OS's handle of the open file (a file descriptor on POSIX, a HANDLE
  // on Windows), for sys/ alone: trust asks it who owns the file.
  intptr_t native_handle() const { return handle_; }

  // Reads `into.size()` bytes from `offset`. False when the file cannot be
  // read or ends before; then `problem` is the reason ("Input/output error").
  bool read_at(std::span<std::byte> into, uint64_t offset, std::string* problem) const;
  // Sets the file's modification time to now; best effort.
  void touch() const;

 private:
  NoFollowFile() = default;
  void release();

  Kind kind_ = Kind::failed;
  intptr_t handle_ = -1;  // -1: none (INVALID_HANDLE_VALUE on Windows)
  FileStamp stamp_;
  std::string problem_;
};

}  // namespace archfit::sys
