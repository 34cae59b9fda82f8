#include "store/store_location.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "sys/trust.hpp"

namespace archfit::store {

namespace fs = std::filesystem;

namespace {

// Where the cache lives decides what kernels a process launches: ignored
// when setuid (sys/trust.hpp).
std::optional<std::string> environment(const char* name) {
  const char* value = sys::trusted_path_variable(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::optional<fs::path> home_dir() {
  if (auto home = environment("HOME")) return fs::path(*home);
  struct passwd entry {
  }, *found = nullptr;
  char buffer[4096];
  if (::getpwuid_r(::geteuid(), &entry, buffer, sizeof buffer, &found) == 0 && found &&
      found->pw_dir && *found->pw_dir) {
    return fs::path(found->pw_dir);
  }
  return std::nullopt;
}

// Why `dir` cannot be trusted with cache entries ("it is writable by
// others …"); "" when it can.
std::string unsafe(const fs::path& dir, const struct stat& info) {
  if (!S_ISDIR(info.st_mode)) return "it is not a directory";
  return sys::untrusted_because(dir, info, "kernels");
}

bool accessible(const fs::path& dir, int mode) {
  return ::faccessat(AT_FDCWD, dir.c_str(), mode, AT_EACCESS) == 0;
}

DirVerdict cannot_use(const std::string& label) {
  return {DirUse::refused, "cannot use " + label + ": " + std::strerror(errno)};
}

// Refuses a directory that is unsafe or unreadable; `label` names it.
std::optional<DirVerdict> refuse_unless_usable(const fs::path& dir, const struct stat& info,
                                               const std::string& label) {
  if (auto problem = unsafe(dir, info); !problem.empty())
    return DirVerdict{DirUse::refused, "refusing " + label + ": " + problem};
  if (!accessible(dir, R_OK | X_OK)) return DirVerdict{DirUse::refused, label + " is not readable"};
  return std::nullopt;
}

// Creates `dir` and its missing parents, each with mode 0700.
std::string create_private_dir(const fs::path& dir) {
  fs::path partial;
  for (const auto& part : dir) {
    partial /= part;
    if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST)
      return "cannot create " + partial.string() + ": " + std::strerror(errno);
  }
  ::chmod(dir.c_str(), 0700);  // whatever the umask took away
  return "";
}

}  // namespace

std::optional<fs::path> cache_dir_from_environment(std::string& why) {
  std::error_code error;
  if (auto dir = environment(kCacheDirVariable)) {
    const fs::path absolute = fs::absolute(*dir, error);
    return error ? fs::path(*dir) : absolute;
  }
  if (auto xdg = environment("XDG_CACHE_HOME"); xdg && fs::path(*xdg).is_absolute())
    return fs::path(*xdg) / "archfit";
  if (auto home = home_dir()) return *home / ".cache" / "archfit";
  why = std::string("no cache directory: neither ") + kCacheDirVariable +
        ", XDG_CACHE_HOME nor HOME is set, and this user has no home directory";
  return std::nullopt;
}

std::vector<fs::path> readonly_dirs_from_environment() {
  std::vector<fs::path> dirs;
  const auto value = environment(kCacheReadonlyDirsVariable);
  if (!value) return dirs;
  std::string_view rest = *value;
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const auto item = rest.substr(0, colon);
    if (!item.empty()) dirs.emplace_back(item);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  return dirs;
}

std::optional<uint64_t> parse_byte_count(std::string_view text) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  std::string_view suffix(end, static_cast<size_t>(text.data() + text.size() - end));
  int shift = 0;
  if (!suffix.empty()) {
    switch (suffix.front()) {
      case 'K':
      case 'k':
        shift = 10;
        break;
      case 'M':
      case 'm':
        shift = 20;
        break;
      case 'G':
      case 'g':
        shift = 30;
        break;
      case 'T':
      case 't':
        shift = 40;
        break;
      default:
        return std::nullopt;
    }
    suffix.remove_prefix(1);
    if (suffix != "" && suffix != "B" && suffix != "iB") return std::nullopt;
  }
  if (shift > 0 && value > (UINT64_MAX >> shift)) return std::nullopt;
  return value << shift;
}

DirVerdict open_primary_dir(const fs::path& dir) {
  const std::string label = "cache directory " + dir.string();
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) {
    if (errno != ENOENT) return cannot_use(label);
    if (auto problem = create_private_dir(dir); !problem.empty()) return {DirUse::refused, problem};
    if (::stat(dir.c_str(), &info) != 0) return cannot_use(label);
  }
  if (auto refused = refuse_unless_usable(dir, info, label)) return *refused;
  if (!accessible(dir, W_OK))
    return {DirUse::read_only, label + " is not writable (" + std::strerror(errno) + ")"};
  return {DirUse::read_write, ""};
}

DirVerdict open_readonly_dir(const fs::path& dir) {
  const std::string label = "read-only cache directory " + dir.string();
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) return cannot_use(label);
  if (auto refused = refuse_unless_usable(dir, info, label)) return *refused;
  return {DirUse::read_only, ""};
}

}  // namespace archfit::store
