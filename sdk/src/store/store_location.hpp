#pragma once
// Where the kernel cache lives, from the environment, and whether a directory
// may hold it: a cache directory must be owned by you (or root) and writable
// by no one else, or another user could plant kernels that archfit launches.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace archfit::store {

inline constexpr const char* kCacheDirVariable = "ARCHFIT_CACHE_DIR";
inline constexpr const char* kCacheReadonlyDirsVariable = "ARCHFIT_CACHE_READONLY_DIRS";
inline constexpr const char* kCacheMaxBytesVariable = "ARCHFIT_CACHE_MAX_BYTES";

// ARCHFIT_CACHE_DIR, else $XDG_CACHE_HOME/archfit (an absolute XDG_CACHE_HOME
// only, as the XDG spec says), else ~/.cache/archfit. Empty, with `why` set,
// when none can be named (no HOME and no passwd entry).
std::optional<std::filesystem::path> cache_dir_from_environment(std::string& why);
// ARCHFIT_CACHE_READONLY_DIRS, colon-separated; empty items are skipped.
std::vector<std::filesystem::path> readonly_dirs_from_environment();
// "1073741824", "512M", "1G", "64KiB": a byte count with an optional binary
// suffix (K, M, G, T, optionally followed by "iB" or "B"). Empty when malformed.
std::optional<uint64_t> parse_byte_count(std::string_view text);

enum class DirUse { read_write, read_only, refused };
struct DirVerdict {
  DirUse use = DirUse::refused;
  std::string problem;  // why not read_write, naming the directory
};
// The primary directory: created with mode 0700 (missing parents too) when
// it does not exist; read_only when it is safe but not writable by us.
DirVerdict open_primary_dir(const std::filesystem::path& dir);
// A read-only secondary directory (a fleet bundle): never created or written;
// refused when missing, unreadable or unsafe.
DirVerdict open_readonly_dir(const std::filesystem::path& dir);

}  // namespace archfit::store
