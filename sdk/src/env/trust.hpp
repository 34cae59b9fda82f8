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
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace archfit::env {

// getenv for a variable that names where archfit loads code or trusted data
// from; nullptr when unset, empty, or when the process is setuid/setgid.
const char* trusted_path_variable(const char* name);

// Who besides the owner may write to a trusted path. The kernel cache makes
// its own folders (0700) and allows no one; plugin folders are made by pip
// or by hand, and with Debian's and Ubuntu's per-user groups (umask 002)
// their group is the user alone, so a group may write to those.
enum class OtherWriters { none, group };

// Why `path` (with `info` from stat) cannot be trusted with `what` (e.g.
// "plugins", "kernels"): "it is owned by uid 1001, not by this user (uid
// 1000)" or "it is writable by others (mode 0777), so someone else could
// plant plugins there; make it owner-only (chmod go-w …)". "" when it can.
std::string untrusted_because(const std::filesystem::path& path, const struct stat& info,
                              std::string_view what, OtherWriters allowed = OtherWriters::none);

// The same for a path, following symbolic links; "" when it cannot be
// stat'ed (the caller reports a missing path its own way).
std::string untrusted_because(const std::filesystem::path& path, std::string_view what,
                              OtherWriters allowed = OtherWriters::none);

}  // namespace archfit::env
