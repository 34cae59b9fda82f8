#pragma once
// Runs the archfit command as a user would, for the CLI tests.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

struct CommandResult {
  int exit_code = -1;
  std::string out;
};

// Runs the archfit command with `arguments` (already shell-quoted) and
// captures stdout; stderr goes to stdout too so failures show in the test log.
// `environment`: assignments put before the command, e.g. "VAR=value ".
inline CommandResult run_archfit_with(const std::string& environment,
                                      const std::string& arguments) {
  CommandResult run;
  const std::string command = environment + std::string(ARCHFIT_CLI) + " " + arguments + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return run;
  std::array<char, 4096> buffer{};
  for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;)
    run.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

inline CommandResult run_archfit(const std::string& arguments) {
  return run_archfit_with("", arguments);
}
