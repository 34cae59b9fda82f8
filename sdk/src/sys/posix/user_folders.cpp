#include "sys/user_folders.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sys/trust.hpp"

namespace archfit::sys {

namespace fs = std::filesystem;

namespace {

// Ignored when setuid, like every variable naming where archfit keeps
// kernels (sys/trust.hpp).
std::optional<fs::path> variable(const char* name) {
  const char* value = trusted_path_variable(name);
  if (value == nullptr) return std::nullopt;
  return fs::path(value);
}

std::optional<fs::path> home_dir() {
  if (auto home = variable("HOME")) return home;
  struct passwd entry {
  }, *found = nullptr;
  char buffer[4096];
  if (::getpwuid_r(::geteuid(), &entry, buffer, sizeof buffer, &found) == 0 && found &&
      found->pw_dir && *found->pw_dir) {
    return fs::path(found->pw_dir);
  }
  return std::nullopt;
}

}  // namespace

std::optional<fs::path> user_cache_dir(std::string& why) {
  if (auto xdg = variable("XDG_CACHE_HOME"); xdg && xdg->is_absolute()) return *xdg / "archfit";
  if (auto home = home_dir()) return *home / ".cache" / "archfit";
  why = "XDG_CACHE_HOME nor HOME is set, and this user has no home directory";
  return std::nullopt;
}

std::string create_private_directory(const fs::path& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return "cannot create " + dir.string() + ": " + std::strerror(errno);
  return "";
}

std::string create_private_directories(const fs::path& dir) {
  fs::path partial;
  for (const auto& part : dir) {
    partial /= part;
    if (auto problem = create_private_directory(partial); !problem.empty()) return problem;
  }
  ::chmod(dir.c_str(), 0700);  // whatever the umask took away
  return "";
}

bool may_access(const fs::path& dir, Access access, std::string* why) {
  const int mode = access == Access::read ? (R_OK | X_OK) : W_OK;
  if (::faccessat(AT_FDCWD, dir.c_str(), mode, AT_EACCESS) == 0) return true;
  if (why) *why = std::strerror(errno);
  return false;
}

bool may_run(const fs::path& file) { return ::access(file.c_str(), X_OK) == 0; }

}  // namespace archfit::sys
