#include "store/store_location.hpp"

#include <charconv>
#include <cstdlib>
#include <system_error>

#include "sys/file_status.hpp"
#include "sys/trust.hpp"
#include "sys/user_folders.hpp"
#include "sys/utf8_path.hpp"

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

DirVerdict cannot_use(const std::string& label, const std::string& reason) {
  return {DirUse::refused, "cannot use " + label + ": " + reason};
}

// Why `dir` cannot be trusted with cache entries ("it is writable by
// others …"); "" when it can.
std::string unsafe(const fs::path& dir) {
  const auto status = sys::file_status(dir, sys::Links::follow);
  if (status && status->type != sys::FileType::directory) return "it is not a directory";
  return sys::untrusted_because(dir, "kernels");
}

// Refuses a directory that is unsafe or unreadable; `label` names it.
std::optional<DirVerdict> refuse_unless_usable(const fs::path& dir, const std::string& label) {
  if (auto problem = unsafe(dir); !problem.empty())
    return DirVerdict{DirUse::refused, "refusing " + label + ": " + problem};
  if (!sys::may_access(dir, sys::Access::read))
    return DirVerdict{DirUse::refused, label + " is not readable"};
  return std::nullopt;
}

}  // namespace

std::optional<fs::path> cache_dir_from_environment(std::string& why) {
  std::error_code error;
  if (auto dir = environment(kCacheDirVariable)) {
    const fs::path given = sys::path_of_utf8(*dir);
    const fs::path absolute = fs::absolute(given, error);
    return error ? given : absolute;
  }
  std::string missing;
  if (auto dir = sys::user_cache_dir(missing)) return dir;
  why = std::string("no cache directory: neither ") + kCacheDirVariable + ", " + missing;
  return std::nullopt;
}

std::vector<fs::path> readonly_dirs_from_environment() {
  std::vector<fs::path> dirs;
  const auto value = environment(kCacheReadonlyDirsVariable);
  if (!value) return dirs;
  std::string_view rest = *value;
  while (!rest.empty()) {
    const auto colon = rest.find(sys::kPathListSeparator);
    const auto item = rest.substr(0, colon);
    if (!item.empty()) dirs.push_back(sys::path_of_utf8(item));
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
  sys::StatusFailure failure;
  if (!sys::file_status(dir, sys::Links::follow, &failure)) {
    if (!failure.missing) return cannot_use(label, failure.reason);
    if (auto problem = sys::create_private_directories(dir); !problem.empty())
      return {DirUse::refused, problem};
    if (!sys::file_status(dir, sys::Links::follow, &failure))
      return cannot_use(label, failure.reason);
  }
  if (auto refused = refuse_unless_usable(dir, label)) return *refused;
  if (std::string why; !sys::may_access(dir, sys::Access::write, &why))
    return {DirUse::read_only, label + " is not writable (" + why + ")"};
  return {DirUse::read_write, ""};
}

DirVerdict open_readonly_dir(const fs::path& dir) {
  const std::string label = "read-only cache directory " + dir.string();
  sys::StatusFailure failure;
  if (!sys::file_status(dir, sys::Links::follow, &failure))
    return cannot_use(label, failure.reason);
  if (auto refused = refuse_unless_usable(dir, label)) return *refused;
  return {DirUse::read_only, ""};
}

}  // namespace archfit::store
