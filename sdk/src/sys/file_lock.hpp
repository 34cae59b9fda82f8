#pragma once
// An exclusive lock on a lock file (flock(2) on POSIX, LockFileEx on Windows):
// the per-key lock of the store.
// The kernel releases it when its holder exits or is killed, so a crashed
// build never leaves a lock behind (unlike O_EXCL lock files). The file itself
// may stay on disk; whoever removes it must hold the lock while doing so, and
// a taker re-checks after locking that the file it holds is still the one at
// the path, so a removal never lets two holders in.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace archfit::sys {

class FileLock {
 public:
  enum class Wait { block, no };

  // Creates `path` (0600) if missing and locks it. Empty when the lock is
  // held elsewhere (Wait::no) or cannot be taken; then `error`, if given,
  // says why, and stays empty when the lock was merely held elsewhere.
  static std::optional<FileLock> take(const std::filesystem::path& path, Wait wait,
                                      std::string* error = nullptr);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  // Removes the lock file while still holding it.
  void remove_file();

 private:
  FileLock(intptr_t handle, std::filesystem::path path) : handle_(handle), path_(std::move(path)) {}
  intptr_t handle_ = -1;  // a file descriptor on POSIX, a HANDLE on Windows
  std::filesystem::path path_;
};

}  // namespace archfit::sys
