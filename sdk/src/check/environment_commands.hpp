#pragma once
// A fix's commands as the user must run them (issue 33): pip as a module of
// the judged environment's own interpreter, quoted for the shell of that
// environment's OS. A bare `pip` in a new terminal is another Python's; on
// ComfyUI portable the only right pip is python_embeded\python.exe -m pip.
//
// Fixes are written in one plain form — `pip install …`, with `cd "DIR" &&`
// and NAME="value" assignments before it where needed — and turned into the
// user's form here, once, for every front end (CLI, --plan, JSON, the C ABI,
// ComfyUI, InvokeAI).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"

namespace archfit::check {

enum class Shell {
  posix,       // sh, bash, zsh: Linux, and macOS
  cmd,         // Windows' cmd.exe: what ComfyUI portable's .bat files run in
  powershell,  // Windows PowerShell and pwsh
};

// The path as Windows names it: WSL's /mnt/c/Users/x → C:\Users\x; any
// other path with its separators turned (what was read is all there is).
// Text in, text out, in UTF-8: a path's text is sys::utf8_of(path), never
// a std::string made a path, which Windows' C++ library reads byte by byte.
std::string windows_path(std::string_view utf8_path);

// One word as `shell` reads it back unchanged, quoted only where it must be.
std::string quoted_word(const std::string& word, Shell shell);

// `plain` in `shell` for `target`: pip run as `"<python>" -m pip`, the
// folder change and the variable assignments in that shell's words, every
// word quoted as that shell needs. A command that does not run pip, or a
// target with no interpreter, keeps its words and gains only the quoting.
std::string command_for(const std::string& plain, const CommandTarget& target, Shell shell);

// The target of a check: the environment archfit chose, else the interpreter
// beside the first --site-packages; Windows when its layout is
// (Lib\site-packages) or a --wheel is built for Windows.
CommandTarget command_target(const CheckReport& report,
                             const std::vector<std::filesystem::path>& site_packages);

// What a fix's summary gains when its commands hold a % and so none is
// written for cmd.exe, which would expand it (speak_in_environment).
inline constexpr std::string_view kCmdCannotQuotePercent =
    "No cmd.exe command is given: a path in it holds %, which cmd.exe expands even in quotes; "
    "run the PowerShell commands instead.";

// Every fix of the report (stacks', components', their alternatives) in the
// target's shell: sh on Linux; cmd on Windows, with the PowerShell form of
// each command beside it (Fix::powershell_commands). A fix whose cmd form
// would hold a % gets no cmd commands and says so (kCmdCannotQuotePercent).
void speak_in_environment(CheckReport& report, const CommandTarget& target);

}  // namespace archfit::check
