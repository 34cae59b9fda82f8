#include "sys/trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "sys/file_io.hpp"

namespace archfit::sys {

const char* trusted_path_variable(const char* name) {
  const char* value = ::secure_getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

bool running_as_superuser() { return ::geteuid() == 0; }

namespace {

// Why `path`, with `info` from stat, cannot be trusted with `what`.
std::string untrusted_by_mode(const std::filesystem::path& path, const struct stat& info,
                              std::string_view what, OtherWriters allowed) {
  if (info.st_uid != ::geteuid() && info.st_uid != 0) {
    return "it is owned by uid " + std::to_string(info.st_uid) + ", not by this user (uid " +
           std::to_string(::geteuid()) +
           "); use a folder of your own, or have it handed over (sudo chown " +
           std::to_string(::geteuid()) + " " + path.string() + ")";
  }
  const mode_t forbidden = allowed == OtherWriters::group ? S_IWOTH : (S_IWGRP | S_IWOTH);
  if ((info.st_mode & forbidden) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return std::string("it is writable by ") +
           ((info.st_mode & S_IWOTH) != 0 ? "others" : "its group") + " (mode " + mode +
           "), so someone else could plant " + std::string(what) +
           " there; make it owner-only (chmod go-w " + path.string() + ")";
  }
  return "";
}

}  // namespace

std::string untrusted_because(const std::filesystem::path& path, std::string_view what,
                              OtherWriters allowed) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return "";
  return untrusted_by_mode(path, info, what, allowed);
}

std::string untrusted_because(const std::filesystem::path& path, const NoFollowFile& file,
                              std::string_view what, OtherWriters allowed) {
  struct stat info {};
  if (::fstat(static_cast<int>(file.native_handle()), &info) != 0) return "";
  return untrusted_by_mode(path, info, what, allowed);
}

std::string untrusted_below(const std::filesystem::path& root, const std::filesystem::path& inside,
                            std::string_view what, OtherWriters allowed) {
  std::filesystem::path folder = root;
  for (const auto& part : inside.lexically_relative(root)) {
    if (part == ".") continue;
    folder /= part;
    struct stat info {};
    if (::lstat(folder.c_str(), &info) != 0) return "";  // not made yet: made 0700 when needed
    if (S_ISLNK(info.st_mode)) {
      return folder.string() + " is a symbolic link where archfit keeps a folder of its own, " +
             "so someone replaced it; remove it (rm " + folder.string() + ")";
    }
    if (!S_ISDIR(info.st_mode)) return folder.string() + " is not a directory";
    if (auto why = untrusted_by_mode(folder, info, what, allowed); !why.empty())
      return folder.string() + ": " + why;
  }
  return "";
}

namespace {

// Each step of `path` from /, by lstat: a symbolic link's own mode means
// nothing (whoever may write its folder may swap it, and that folder is
// the step before), anything else must pass untrusted_because.
std::string untrusted_steps(const std::filesystem::path& path, const std::filesystem::path& asked,
                            std::string_view what, OtherWriters allowed) {
  std::filesystem::path step;
  for (const auto& part : path) {  // "/", "usr", "lib", "x.so"
    step /= part;
    struct stat info {};
    if (::lstat(step.c_str(), &info) != 0) return "";  // gone meanwhile: the caller finds out
    if (S_ISLNK(info.st_mode)) continue;
    if (S_ISDIR(info.st_mode) && (info.st_mode & S_ISVTX) != 0)
      info.st_mode &= ~static_cast<mode_t>(S_IWGRP | S_IWOTH);  // /tmp: only its owner counts
    if (auto why = untrusted_by_mode(step, info, what, allowed); !why.empty())
      return step == asked ? why : step.string() + ": " + why;  // the caller names `asked`
  }
  return "";
}

}  // namespace

std::string untrusted_path_chain(const std::filesystem::path& file, std::string_view what,
                                 OtherWriters allowed) {
  const std::unique_ptr<char, decltype(&std::free)> real(::realpath(file.c_str(), nullptr),
                                                         &std::free);
  if (!real) return "";
  // The path as given (a link in a folder anyone can write to can be
  // swapped), then where it resolves.
  std::error_code error;
  const std::filesystem::path given = std::filesystem::absolute(file, error).lexically_normal();
  if (auto why = untrusted_steps(given, given, what, allowed); !why.empty()) return why;
  return untrusted_steps(real.get(), given, what, allowed);
}

}  // namespace archfit::sys
