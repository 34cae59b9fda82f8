#include "sys/child_process.hpp"

#include <cerrno>
#include <cstdio>
#include <system_error>

#include <windows.h>

namespace archfit::sys {

// Windows has no fork(): work that must run apart from the host runs in a
// helper executable there (the plugin probe helper, `jit bundle`), which
// the Windows build does not have yet (docs/windows.md).
ChildOutcome run_in_child(const std::function<std::vector<uint8_t>()>&, const ChildLimits&) {
  throw std::system_error(ENOSYS, std::generic_category(),
                          "running work in a child process needs fork(), which Windows lacks; "
                          "this Windows build does not have the helper that replaces it yet");
}

// An NTSTATUS code as Windows reports a crash: 0xC0000005, an access
// violation.
std::string describe_crash(int signal, const std::string& doing) {
  char code[16];
  std::snprintf(code, sizeof code, "0x%08X", static_cast<unsigned>(signal));
  return "it crashed " + doing + " (exception " + code + ")";
}

// Job objects do this on Windows: a child's leftovers end with its job.
void become_child_subreaper() {}

namespace {

// The last word on an exception nothing handled: the process ends at once
// with the exception's code as its status (0xC0000005), as Windows reports
// a crash, before Windows Error Reporting or a debugger is asked.
LONG WINAPI end_with_the_exception_code(EXCEPTION_POINTERS* exception) {
  ::TerminateProcess(::GetCurrentProcess(), exception->ExceptionRecord->ExceptionCode);
  return EXCEPTION_EXECUTE_HANDLER;
}

}  // namespace

void end_quietly_on_crash() {
  ::SetErrorMode(::GetErrorMode() | SEM_NOGPFAULTERRORBOX | SEM_FAILCRITICALERRORS |
                 SEM_NOOPENFILEERRORBOX);
  // Wine starts its debugger whatever the error mode says (a backtrace that
  // took a crash past a 1 s limit); it asks this filter first, as Windows does.
  ::SetUnhandledExceptionFilter(end_with_the_exception_code);
}

// Windows hands a new process only the handles named for it.
void close_inherited_files() {}

}  // namespace archfit::sys
