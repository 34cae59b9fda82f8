#include "sys/console.hpp"

#include <fcntl.h>
#include <io.h>

#include <cstdio>
#include <cstdlib>

#include "sys/windows/wide.hpp"

// After <windows.h> (wide.hpp), which it needs before it.
#include <shellapi.h>

namespace archfit::sys {

using namespace archfit::sys::windows;

namespace {

HANDLE handle_of(Stream stream) {
  return ::GetStdHandle(stream == Stream::in    ? STD_INPUT_HANDLE
                        : stream == Stream::out ? STD_OUTPUT_HANDLE
                                                : STD_ERROR_HANDLE);
}

bool colours_on(Stream stream) {
  DWORD mode = 0;
  if (!::GetConsoleMode(handle_of(stream), &mode)) return false;
  return stream == Stream::in || (mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING) != 0;
}

}  // namespace

// A console that takes colour sequences: a console whose virtual terminal
// processing prepare_console() could turn on (Windows 10 and later). An
// older console shows the sequences as text, so it is treated as none.
bool is_terminal(Stream stream) { return colours_on(stream); }

void prepare_console() {
  ::SetConsoleOutputCP(CP_UTF8);
  for (const Stream stream : {Stream::out, Stream::err}) {
    DWORD mode = 0;
    const HANDLE console = handle_of(stream);
    if (::GetConsoleMode(console, &mode))
      ::SetConsoleMode(console, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING);
  }
}

std::vector<std::string> command_line_utf8(int argc, char** argv) {
  int count = 0;
  wchar_t** words = ::CommandLineToArgvW(::GetCommandLineW(), &count);
  if (words == nullptr) return std::vector<std::string>(argv, argv + argc);
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) out.push_back(to_utf8(words[i]));
  ::LocalFree(words);
  return out;
}

void binary_stdout() { ::_setmode(::_fileno(stdout), _O_BINARY); }

std::string environment_variable(const char* name) {
  const wchar_t* value = ::_wgetenv(to_wide(name).c_str());
  return value ? to_utf8(value) : "";
}

}  // namespace archfit::sys
