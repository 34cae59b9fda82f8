#pragma once
// Running code that may crash, exit or hang in a short-lived child process:
// fork() (no exec, so there is no helper executable to install), run the
// work there, read the bytes it returns over a pipe within a time limit and
// a byte cap, and reap the child however it ends. The plugin probe helper
// loads each plugin this way (plugin/probe_helper.hpp), from its one
// thread, so a plugin that dies or loops takes only its child down. Work
// started from a threaded process (`jit bundle`'s compiles) runs a program
// instead (sys/run_program.hpp), and Windows, which has no fork(), has no
// run_in_child.
//
// fork() in a multithreaded process copies only the calling thread: a lock
// another thread held at that moment stays held in the child (with
// AddressSanitizer's allocator, which takes no lock around fork(), a child
// hung that way). So only a single-threaded process calls run_in_child;
// should the child still wait on a lock, the time limit kills it and the
// work is reported as having hung.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace archfit::sys {

struct ChildLimits {
  std::chrono::milliseconds time_limit{10'000};  // from fork to the child reaped
  size_t max_bytes = size_t{64} << 20;           // what the child may send back
  // When set, what the child writes to its stdout and stderr goes to a pipe
  // this process drains: the first `kept_message_bytes` are kept in
  // ChildOutcome::messages, and a child that writes more than
  // `max_message_bytes` in all is killed (Ending::flooded). Unset, the
  // child's stdout and stderr are this process's stderr.
  bool capture_messages = false;
  size_t kept_message_bytes = 4096;
  size_t max_message_bytes = size_t{1} << 20;
  // For a caller that made itself a child subreaper (prctl
  // PR_SET_CHILD_SUBREAPER, the plugin probe helper): once the child has
  // ended, every process it left behind (a daemon it forked, which setsid()
  // took out of its process group) is killed and reaped, and counted in
  // ChildOutcome::left_running. Only a single-threaded caller may set it:
  // it waits for any child of this process.
  bool end_descendants = false;
};

// How the child ended, and what it sent before it did.
struct ChildOutcome {
  enum class Ending {
    exited,         // exit_status holds its status (0: the work returned)
    signalled,      // signal holds the signal that ended it
    timed_out,      // killed at the time limit
    sent_too_much,  // killed on passing max_bytes
    flooded,        // killed on writing more than max_message_bytes to stdout and stderr
    vanished,       // not reapable (the host ignores SIGCHLD): the status is unknown
  };
  Ending ending = Ending::exited;
  int exit_status = 0;
  int signal = 0;
  std::vector<uint8_t> output;  // everything it wrote before it ended
  std::string messages;         // capture_messages: the first of what it printed
  uint64_t message_bytes = 0;   // capture_messages: all it printed
  size_t left_running = 0;      // end_descendants: the processes it left behind, killed
};

// Forks; the child runs `work` with stdin on /dev/null and stdout on stderr
// (nothing it prints can mix into the host's own stdout, a `--json` report),
// writes what `work` returns to the pipe and _exit(0)s: it never returns
// into the host's code, nor runs its atexit handlers or static destructors.
// A `work` that throws ends the child with status kWorkThrew. Never leaves a
// zombie. Throws std::system_error only when the pipe or the fork cannot be
// made (no child to blame).
ChildOutcome run_in_child(const std::function<std::vector<uint8_t>()>& work,
                          const ChildLimits& limits);

inline constexpr int kWorkThrew = 125;

// Whether this OS has run_in_child: POSIX forks; Windows has no fork(), and
// work that must run apart starts a program there (sys/run_program.hpp).
#ifdef _WIN32
inline constexpr bool kCanFork = false;
#else
inline constexpr bool kCanFork = true;
#endif

// For a helper process that runs children for others (the plugin probe
// helper): every process a child leaves behind, even one that setsid()s and
// forks again, comes to this process when its parent ends, to be killed
// (prctl PR_SET_CHILD_SUBREAPER on Linux).
void become_child_subreaper();

// For a process that runs code which may crash (a plugin, in the probe
// helper's process of its own on Windows): a crash ends it at once, with
// the exception's code as its status, no dialog and no debugger started
// (Windows: SetErrorMode with SEM_NOGPFAULTERRORBOX for Windows Error
// Reporting, and an unhandled-exception filter that ends the process, which
// Wine's debugger does not pass: it took a crash past a 1 s limit). POSIX:
// nothing to do, a signal ends it at once.
void end_quietly_on_crash();

// Closes every file this process was started with beyond stdin, stdout and
// stderr: whatever the starter left open is not its children's to keep.
void close_inherited_files();

// Why a child that did not exit 0 failed, a sentence about what it was
// `doing` ("loading"): "it crashed loading (signal 11, SIGSEGV)", "it exited
// with status 3 while loading", "it did not finish loading within 10 s;
// killed". "" for a child that exited 0.
std::string describe_failure(const ChildOutcome& outcome, const ChildLimits& limits,
                             std::string_view doing);

// The words for a child that crashed while `doing`, per OS: "it crashed
// loading (signal 11, SIGSEGV)", "it was killed while loading (signal 9,
// SIGKILL)"; on Windows "it crashed loading (exception 0xC0000005)".
std::string describe_crash(int signal, const std::string& doing);

}  // namespace archfit::sys
