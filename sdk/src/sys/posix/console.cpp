#include "sys/console.hpp"

#include <unistd.h>

#include <cstdlib>

namespace archfit::sys {

bool is_terminal(Stream stream) {
  const int fd = stream == Stream::in    ? STDIN_FILENO
                 : stream == Stream::out ? STDOUT_FILENO
                                         : STDERR_FILENO;
  return ::isatty(fd) != 0;
}

// A POSIX terminal takes UTF-8 and colour sequences as they are.
void prepare_console() {}

std::vector<std::string> command_line_utf8(int argc, char** argv) {
  return std::vector<std::string>(argv, argv + argc);
}

void binary_stdout() {}

std::string environment_variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace archfit::sys
