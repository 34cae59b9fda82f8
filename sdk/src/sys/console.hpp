#pragma once
// The terminal archfit prints to: whether a stream is one (colours and a
// progress line only there), and, on Windows, making the console show what
// archfit prints — UTF-8 (the console's code page is an ANSI one by
// default) and ANSI colour sequences (virtual terminal processing, off by
// default in conhost).
#include <string>
#include <vector>

// The process's words from its starter (its command line, its environment)
// are read here too, as UTF-8.

namespace archfit::sys {

enum class Stream { in, out, err };

// Whether `stream` is an interactive terminal: isatty on POSIX; a console
// handle (GetConsoleMode succeeds) on Windows.
bool is_terminal(Stream stream);

// Sets the console up for UTF-8 text and colour sequences; on POSIX, and
// where no console is attached, it does nothing. Called once, first thing,
// by the `archfit` command.
void prepare_console();

// The command line's words in UTF-8: `argv` as given on POSIX; on Windows,
// where `argv` is in the ANSI code page (a folder named in another script
// is lost there), the UTF-16 command line converted.
std::vector<std::string> command_line_utf8(int argc, char** argv);

// Makes stdout carry bytes as they are: Windows' C runtime opens it in text
// mode, turning each "\n" into "\r\n"; POSIX has nothing to change. For a
// helper whose stdout is a framed answer (archfit-plugin-probe).
void binary_stdout();

// An environment variable's value in UTF-8 (getenv on POSIX; on Windows,
// whose getenv answers in the ANSI code page, the UTF-16 value converted);
// "" when it is unset. Not for variables that name code to load: those are
// read through trust.hpp's trusted_path_variable.
std::string environment_variable(const char* name);

}  // namespace archfit::sys
