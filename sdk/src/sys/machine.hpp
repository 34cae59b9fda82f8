#pragma once
// The CPU of the machine archfit runs on, as ELF names CPUs ("x86_64",
// "aarch64"): a host binary built for another never loads here.
#include <string>

namespace archfit::sys {

// Empty when it cannot be told.
std::string this_machine();

// This process's id (getpid; GetCurrentProcessId): part of the names of the
// temporary files and folders it makes.
unsigned long this_process_id();

// Whether this Linux is WSL2's, whose GPU driver is the Windows one: its
// kernel release says so ("5.15.167.4-microsoft-standard-WSL2"). A test
// names another file than /proc/sys/kernel/osrelease.
bool running_under_wsl(const char* kernel_release_file = "/proc/sys/kernel/osrelease");

}  // namespace archfit::sys
