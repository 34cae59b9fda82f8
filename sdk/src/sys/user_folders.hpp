#pragma once
// The folders that belong to the user running archfit, and the folders
// archfit makes for itself there: the kernel cache's place when nothing
// names one ($XDG_CACHE_HOME/archfit or ~/.cache/archfit on POSIX,
// %LOCALAPPDATA%\archfit on Windows), folders only their owner may use
// (mode 0700; on Windows an ACL granting the owner and SYSTEM alone), and
// whether this process may read or write a folder.
#include <filesystem>
#include <optional>
#include <string>

namespace archfit::sys {

// The separator of a list of paths in one variable (ARCHFIT_CACHE_READONLY_DIRS,
// PATH): ':' on POSIX, ';' on Windows, where ':' follows every drive letter.
#ifdef _WIN32
inline constexpr char kPathListSeparator = ';';
#else
inline constexpr char kPathListSeparator = ':';
#endif

// The per-user folder for archfit's cache, "archfit" at its end; nullopt
// when the user has none, and then `why` names what was looked for:
// "XDG_CACHE_HOME nor HOME is set, and this user has no home directory".
std::optional<std::filesystem::path> user_cache_dir(std::string& why);

// Makes `dir` and its missing parents, each private to this user. Returns
// "" on success (also when they were there already), else "cannot create
// <the folder>: <reason>".
std::string create_private_directories(const std::filesystem::path& dir);

// Makes `dir` alone, private to this user; "" when made or already there,
// else "cannot create <dir>: <reason>".
std::string create_private_directory(const std::filesystem::path& dir);

enum class Access { read, write };

// Whether this process may list and enter (read) or add entries to (write)
// the folder `dir`; when not, `why` (if given) is the OS's reason.
bool may_access(const std::filesystem::path& dir, Access access, std::string* why = nullptr);

// Whether this process may run `file` as a program: access(X_OK) on POSIX;
// on Windows, where any readable file may be run, that it is a file.
bool may_run(const std::filesystem::path& file);

}  // namespace archfit::sys
