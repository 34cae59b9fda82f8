// Never compiled: what tests/security/check_no_shell.cmake must catch.
#include <cstdio>
#include <string>
void run_user_command(const std::string& name) { popen(("nvidia-smi " + name).c_str(), "r"); }
