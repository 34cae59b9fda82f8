#pragma once
// The CPU of the machine archfit runs on, as ELF names CPUs ("x86_64",
// "aarch64"): a host binary built for another never loads here.
#include <string>

namespace archfit::sys {

// Empty when it cannot be told.
std::string this_machine();

}  // namespace archfit::sys
