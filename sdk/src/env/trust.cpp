#include "trust.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace archfit::env {

const char* trusted_path_variable(const char* name) {
  const char* value = ::secure_getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

std::string untrusted_because(const std::filesystem::path& path, const struct stat& info,
                              std::string_view what, OtherWriters allowed) {
  if (info.st_uid != ::geteuid() && info.st_uid != 0) {
    return "it is owned by uid " + std::to_string(info.st_uid) + ", not by this user (uid " +
           std::to_string(::geteuid()) + ")";
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

std::string untrusted_because(const std::filesystem::path& path, std::string_view what,
                              OtherWriters allowed) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return "";
  return untrusted_because(path, info, what, allowed);
}

}  // namespace archfit::env
