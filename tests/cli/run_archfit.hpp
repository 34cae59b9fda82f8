#pragma once
// Runs the archfit command as a user would, for the CLI tests.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;  // run_archfit_apart only
};

inline std::string read_all(FILE* stream) {
  std::string text;
  std::array<char, 4096> buffer{};
  for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), stream)) > 0;)
    text.append(buffer.data(), n);
  return text;
}

// Runs `command` with sh and captures its stdout and exit code.
inline CommandResult run_shell_command(const std::string& command) {
  CommandResult run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return run;
  run.out = read_all(pipe);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// Runs the archfit command with `arguments` (already shell-quoted) and
// captures stdout; stderr goes to stdout too so failures show in the test log.
// `environment`: assignments put before the command, e.g. "VAR=value ".
inline CommandResult run_archfit_with(const std::string& environment,
                                      const std::string& arguments) {
  return run_shell_command(environment + std::string(ARCHFIT_CLI) + " " + arguments + " 2>&1");
}

// Like run_archfit_with, but stdout alone in `out`, and stderr in `err`
// (through a file named after this process).
inline CommandResult run_archfit_apart(const std::string& environment,
                                       const std::string& arguments) {
  const std::string err_file = (std::filesystem::temp_directory_path() /
                                ("archfit_cli_stderr_" + std::to_string(::getpid())))
                                   .string();
  CommandResult run = run_shell_command(environment + std::string(ARCHFIT_CLI) + " " + arguments +
                                        " 2>'" + err_file + "'");
  if (FILE* err = std::fopen(err_file.c_str(), "r")) {
    run.err = read_all(err);
    std::fclose(err);
  }
  std::remove(err_file.c_str());
  return run;
}

inline CommandResult run_archfit(const std::string& arguments) {
  return run_archfit_with("", arguments);
}
