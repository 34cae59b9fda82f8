#pragma once
// What archfit trusts from its surroundings before it loads code or kernels:
//
// - Paths from the environment. A setuid or setgid process (AT_SECURE) runs
//   with its owner's rights but its caller's environment, so variables that
//   name where archfit loads plugins, NVRTC, kernels or its knowledge base
//   from are ignored there (secure_getenv).
// - Directories and files that hold what archfit loads (plugin folders and
//   libraries, kernel-cache folders and entries): they must belong to this
//   user or root and be writable by no one else, or someone else could
//   plant code there.
#include <filesystem>
#include <string>
#include <string_view>

namespace archfit::sys {

// getenv for a variable that names where archfit loads code or trusted data
// from; nullptr when unset, empty, or when the process is setuid/setgid.
const char* trusted_path_variable(const char* name);

// Who besides the owner may write to a trusted path. The kernel cache makes
// its own folders (0700) and allows no one; plugin folders are made by pip
// or by hand, and with Debian's and Ubuntu's per-user groups (umask 002)
// their group is the user alone, so a group may write to those.
enum class OtherWriters { none, group };

class NoFollowFile;

// Whether this process runs with the machine's highest rights: root on
// POSIX, an elevated administrator on Windows. What such a process runs
// must pass untrusted_path_chain first.
bool running_as_superuser();

// Why `path` cannot be trusted with `what` (e.g. "plugins", "kernels"),
// following symbolic links: "it is owned by uid 1001, not by this user (uid
// 1000)" or "it is writable by others (mode 0777), so someone else could
// plant plugins there; make it owner-only (chmod go-w …)". On Windows the
// owner must be this user, an administrator or SYSTEM, and the ACL may let
// no one else write. "" when it can be trusted, or cannot be stat'ed (the
// caller reports a missing path its own way).
std::string untrusted_because(const std::filesystem::path& path, std::string_view what,
                              OtherWriters allowed = OtherWriters::none);

// The same for a file already opened (sys/file_io.hpp), `path` naming it:
// judged by the file open, whatever the path leads to now.
std::string untrusted_because(const std::filesystem::path& path, const NoFollowFile& file,
                              std::string_view what, OtherWriters allowed = OtherWriters::none);

// The folders below a root already trusted, such as a kernel cache's
// v1/<shard>/ (issue 24: a shard made 0777, or replaced by a link to another
// user's folder, was served from). Each folder from `root`'s child down to
// `inside`, inclusive, that exists must be a real directory (no symbolic
// link: archfit made these folders itself) that passes untrusted_because.
// `inside` lies lexically under `root`. Returns why not, naming the folder
// and the command that fixes it; "" when all pass.
std::string untrusted_below(const std::filesystem::path& root, const std::filesystem::path& inside,
                            std::string_view what, OtherWriters allowed = OtherWriters::none);

// For a file chosen by a path from outside (ARCHFIT_NVRTC, CUDA_HOME,
// LD_LIBRARY_PATH, a plugin manifest and its `library`): the file and every
// folder from / down must pass untrusted_because, along the path as given
// and along its real path, since whoever may write to any of them may swap
// the file. A world-writable folder with the sticky bit (/tmp) passes: there
// no one can replace another's entry, and the entry below it is judged in
// turn. Returns why not, prefixed with the path that fails unless that is
// `file` itself; "" when all pass, or when `file` does not exist (the caller
// reports that its own way).
std::string untrusted_path_chain(const std::filesystem::path& file, std::string_view what,
                                 OtherWriters allowed = OtherWriters::group);

}  // namespace archfit::sys
