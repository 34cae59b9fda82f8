#pragma once
// --plan: the upgrade people do by hand, as a shell script they can read and
// run — back the environment up, replace each failing component with the
// advised build, check again. archfit never runs it. A POSIX sh script; for
// a Windows environment (fixes written for cmd) a .bat file for cmd.exe.
#include <string>

#include "check/check.hpp"

namespace archfit::render {

struct PlanContext {
  std::string python;  // the environment's interpreter; "" lets the script default to python3
  std::string verify_command;  // the archfit check command to run again, already shell-quoted
};

std::string render_plan(const check::CheckReport& report, const PlanContext& context);

// 'text' for a POSIX shell, with embedded single quotes escaped.
std::string shell_quote(const std::string& text);

}  // namespace archfit::render
