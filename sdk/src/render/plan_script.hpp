#pragma once
// --plan: the upgrade people do by hand, as a shell script they can read and
// run — back the environment up, replace each failing component with the
// advised build, check again. archfit never runs it. A POSIX sh script; for
// a Windows environment (fixes written for cmd) a .bat file for cmd.exe.
#include <string>
#include <vector>

#include "check/check.hpp"

namespace archfit::render {

// One argument of the check the plan runs again at its end, as the user
// gave it: its value quoted when rendered, for the shell the plan is for.
struct PlanArgument {
  std::string option;  // "--gpu"; empty for a path named alone
  std::string value;
  bool path = false;  // written as Windows names it in a .bat plan (WSL's /mnt/c/… → C:\…)
};

struct PlanContext {
  std::string python;  // the environment's interpreter; "" lets the script default to python3
  std::vector<PlanArgument> verify_arguments;  // after `archfit check`
};

std::string render_plan(const check::CheckReport& report, const PlanContext& context);

// 'text' for a POSIX shell, with embedded single quotes escaped.
std::string shell_quote(const std::string& text);

}  // namespace archfit::render
