#include "path_options.hpp"

#include <filesystem>
#include <string>

#include "sys/file_status.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::cli {

namespace {

std::optional<sys::FileType> type_of(const std::string& text) {
  const auto status = sys::file_status(sys::path_of_utf8(text), sys::Links::follow);
  if (!status) return std::nullopt;
  return status->type;
}

}  // namespace

CLI::Validator existing_file() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto type = type_of(text);
        if (!type) return "File does not exist: " + text;
        if (*type == sys::FileType::directory) return "File is actually a directory: " + text;
        return {};
      },
      "FILE", "FILE");
}

CLI::Validator existing_directory() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto type = type_of(text);
        if (!type) return "Directory does not exist: " + text;
        if (*type != sys::FileType::directory) return "Directory is actually a file: " + text;
        return {};
      },
      "DIR", "DIR");
}

}  // namespace archfit::cli
