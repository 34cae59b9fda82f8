#include "plan_script.hpp"

#include <algorithm>
#include <sstream>

#include "check/environment_commands.hpp"

namespace archfit::render {

namespace {

// A fix's commands name the environment's interpreter when the check knew
// it (check/environment_commands.hpp); where it did not, they say
// `pip install …`, and the plan runs the interpreter it was given.
std::string with_environment_pip(std::string command) {
  for (const char* verb : {"pip install", "pip uninstall"}) {
    const auto at = command.find(verb);
    if (at == std::string::npos || (at >= 3 && command.compare(at - 3, 3, "-m ") == 0)) continue;
    return command.replace(at, 3, "\"$PYTHON\" -m pip");
  }
  return command;
}

// Text for a comment line (`#`, `rem`): a name read from the environment
// may hold a newline, and what follows one in a script runs (issue 34).
std::string comment_text(std::string text) {
  for (auto& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return text;
}

// "GeForce RTX 4090 (sm_89) and GeForce RTX 5090 (sm_120)".
std::string device_names(const std::vector<check::DeviceInfo>& devices) {
  if (devices.empty()) return "this GPU";
  std::string names;
  for (size_t d = 0; d < devices.size(); ++d) {
    if (d) names += d + 1 == devices.size() ? " and " : ", ";
    names += devices[d].name + " (" + devices[d].cc.sm_name() + ")";
  }
  return names;
}

// Text as a .bat file reads it back: cmd.exe expands %NAME% (and %~…) on
// every line of a batch file, its `rem` lines included, and %% is a literal
// % there (not at the prompt, which is why the fixes hold no %).
std::string batch_literal(const std::string& text) {
  std::string out;
  for (const char c : text) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

// The plan for a Windows environment: a .bat file for cmd.exe, whose
// commands the check already wrote for cmd.
std::string render_batch_plan(const check::CheckReport& report, const PlanContext& context) {
  std::ostringstream out;
  // Built piece by piece: "\"" + … trips GCC 12's -Wrestrict false
  // positive (GCC PR 105651).
  std::string python = "python";
  if (!context.python.empty()) {
    python = "\"";
    python += batch_literal(check::windows_path(context.python));
    python += "\"";
  }
  out << "@echo off\r\n"
      << "rem archfit plan: replace what will not run on " << device_names(report.devices)
      << ".\r\nrem Read it before you run it; archfit never runs it. Stops at the first failing "
         "step.\r\nsetlocal\r\n\r\n"
      << "rem 1. Back up the environment, so any step can be undone.\r\n"
      << python << " -m pip freeze > archfit-backup.txt || exit /b 1\r\n"
      << "echo saved the installed packages to archfit-backup.txt (undo: " << python
      << " -m pip install -r archfit-backup.txt)\r\n\r\n"
      << "rem 2. Replace what fails.\r\n";
  size_t steps = 0;
  for (const auto& stack : report.stacks) {
    if (!compat::is_failure(stack.verdict) || stack.fix.empty()) continue;
    out << "rem "
        << batch_literal(comment_text(stack.name +
                                      (stack.version.empty() ? "" : " " + stack.version) + ": " +
                                      std::string(compat::to_string(stack.verdict))))
        << ".\r\n";
    if (stack.fix.commands.empty())
      out << "rem   (no command: " << batch_literal(comment_text(stack.fix.summary)) << ")\r\n";
    for (const auto& command : stack.fix.commands)
      out << batch_literal(command) << " || exit /b 1\r\n";
    ++steps;
  }
  if (steps == 0) out << "rem nothing fails: nothing to replace\r\n";
  out << "\r\nrem 3. Check again.\r\narchfit check";
  for (const PlanArgument& argument : context.verify_arguments) {
    if (!argument.option.empty()) out << ' ' << argument.option;
    out << ' '
        << batch_literal(check::quoted_word(
               argument.path ? check::windows_path(argument.value) : argument.value,
               check::Shell::cmd));
  }
  out << "\r\n";
  return out.str();
}

}  // namespace

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string render_plan(const check::CheckReport& report, const PlanContext& context) {
  const bool windows =
      std::any_of(report.stacks.begin(), report.stacks.end(),
                  [](const check::StackResult& s) { return s.fix.shell == "cmd"; });
  if (windows) return render_batch_plan(report, context);
  std::ostringstream out;
  out << "#!/bin/sh\n"
      << "# archfit plan: replace what will not run on " << device_names(report.devices)
      << ".\n# Read it before you run it; archfit never runs it. Stops at the first failing step.\n"
      << "set -eu\n"
      // Single-quoted: a venv path holding $(…) or backticks stays a path.
      << "if [ -z \"${PYTHON:-}\" ]; then PYTHON="
      << shell_quote(context.python.empty() ? "python3" : context.python) << "; fi\n\n"
      << "# 1. Back up the environment, so any step can be undone.\n"
      << "backup=\"archfit-backup-$(date +%Y%m%d-%H%M%S).txt\"\n"
      << "\"$PYTHON\" -m pip freeze > \"$backup\"\n"
      << "echo \"saved the installed packages to $backup (undo: \\\"$PYTHON\\\" -m pip install -r "
         "$backup)\"\n\n"
      << "# 2. Replace what fails.\n";
  size_t steps = 0;
  for (const auto& stack : report.stacks) {
    if (!compat::is_failure(stack.verdict) || stack.fix.empty()) continue;
    out << "# "
        << comment_text(stack.name + (stack.version.empty() ? "" : " " + stack.version) + ": " +
                        std::string(compat::to_string(stack.verdict)) + ". " + stack.fix.summary)
        << "\n";
    if (stack.fix.commands.empty()) out << "#   (no command: see above)\n";
    for (const auto& command : stack.fix.commands) out << with_environment_pip(command) << "\n";
    ++steps;
  }
  if (steps == 0) out << "# nothing fails: nothing to replace\n";
  out << "\n# 3. Check again.\narchfit check";
  for (const PlanArgument& argument : context.verify_arguments) {
    if (!argument.option.empty()) out << ' ' << argument.option;
    out << ' ' << shell_quote(argument.value);
  }
  out << "\n";
  return out.str();
}

}  // namespace archfit::render
