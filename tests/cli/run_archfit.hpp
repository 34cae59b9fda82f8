#pragma once
// Runs the archfit command as a user would, for the CLI tests: the same
// program with the same arguments on Linux and, cross-built, under Wine
// (tests/windows). Through archfit's own sys::run_program, never a shell:
// each argument reaches archfit exactly as written here, quotes and all,
// whatever OS parses command lines.
#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "sys/run_program.hpp"
#include "sys/utf8_path.hpp"

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;  // run_archfit_apart only
};

// Variables set for the command over this process's environment; a variable
// set to "" is there and empty, as `VAR= archfit …` leaves it.
using Environment = std::vector<std::pair<std::string, std::string>>;

struct RunPlace {
  Environment environment;
  std::filesystem::path working_directory;  // empty: this process's
};

// Runs `program` with `arguments`; stderr joins stdout (in `out`) unless
// `apart`, when it comes back in `err`. A hang is stopped after ten minutes
// and reads as exit code -1, so that the test fails instead of CI.
inline CommandResult run_test_program(const std::filesystem::path& program,
                                      const std::vector<std::string>& arguments,
                                      const RunPlace& place, bool apart) {
  archfit::sys::ProgramOptions options;
  options.timeout = std::chrono::minutes(10);
  options.standard_error =
      apart ? archfit::sys::StandardError::captured : archfit::sys::StandardError::merged;
  options.environment = place.environment;
  options.working_directory = place.working_directory;
  archfit::sys::ProgramResult ran = archfit::sys::run_program(program, arguments, options);
#ifdef _WIN32
  // The C runtime ends a line with CRLF on a Windows pipe, as Windows tools
  // do; the expectations are written once, with LF.
  for (std::string* text : {&ran.output, &ran.error_output}) {
    std::string lf;
    for (size_t i = 0; i < text->size(); ++i)
      if (!((*text)[i] == '\r' && i + 1 < text->size() && (*text)[i + 1] == '\n')) lf += (*text)[i];
    *text = std::move(lf);
  }
#endif
  return {ran.exited ? ran.exit_status : -1, ran.output, ran.error_output};
}

inline CommandResult run_archfit(const std::vector<std::string>& arguments,
                                 const RunPlace& place = {}) {
  return run_test_program(ARCHFIT_CLI, arguments, place, false);
}

// Like run_archfit, but stdout alone in `out` and stderr in `err`.
inline CommandResult run_archfit_apart(const std::vector<std::string>& arguments,
                                       const RunPlace& place = {}) {
  return run_test_program(ARCHFIT_CLI, arguments, place, true);
}

// A path as one argument, in UTF-8 (what archfit takes on every OS).
inline std::string arg(const std::filesystem::path& path) {
  const std::u8string text = path.u8string();
  return std::string(text.begin(), text.end());
}

// A test's scratch folder: in the temp folder, and named with a space and
// outside ASCII, so that every command the tests run meets such a path (the
// user folders of many Windows users are named so).
inline std::filesystem::path scratch_folder(const std::string& ascii_name) {
  std::filesystem::path folder = std::filesystem::temp_directory_path() / ascii_name;
  folder += std::filesystem::path(u8" Modèles 模型");
  return folder;
}

// A path archfit printed (UTF-8, in its JSON) as a path again: not
// fs::path(std::string), which Windows' C++ library reads byte by byte.
inline std::filesystem::path path_of(const std::string& utf8) {
  return archfit::sys::path_of_utf8(utf8);
}
