#pragma once
// Runs a program and captures what it prints: posix_spawn, never a shell (a
// path is the user's and must not be parsed), stdin from /dev/null, its own
// process group so that a program past its time limit is stopped together
// with whatever it started, no file of this process's beyond stdin, stdout
// and stderr, every signal at its default action and none blocked. It never
// forks this process, so a threaded host may call it from any thread.
// Callers: the plugin helper, `jit bundle`'s compiles, and the CLI tests,
// which run `archfit` as a user would, on both OSes, without a shell.
#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace archfit::sys {

// What a program's file name ends with: nothing on POSIX, ".exe" on Windows.
#ifdef _WIN32
inline constexpr const char* kProgramSuffix = ".exe";
#else
inline constexpr const char* kProgramSuffix = "";
#endif

// Where the program's stderr goes.
enum class StandardError {
  inherited,  // where this process's goes
  merged,     // into `output`, with stdout, in the order written
  captured,   // into `error_output`, apart from stdout (a JSON answer on stdout stays whole)
};

struct ProgramOptions {
  std::chrono::milliseconds timeout = std::chrono::seconds(60);
  StandardError standard_error = StandardError::inherited;
  size_t max_output = 16u << 20;  // for each of output and error_output; beyond it is dropped
  // Past max_output bytes in all (stdout and stderr together), the program
  // and what it started are killed at once (ProgramResult::output_overflowed)
  // instead of read to their end: a program that floods is not waited for.
  bool stop_past_max_output = false;
  // Windows: once the program has ended, what it started and left running
  // in its job is killed at once and counted (ProgramResult::left_running)
  // instead of waited for until the time limit. POSIX: not applied; the
  // plugin helper gets such leftovers as a child subreaper there
  // (sys/child_process.hpp).
  bool end_what_it_leaves = false;
  // The folder it starts in; empty: this process's current folder.
  std::filesystem::path working_directory;
  // Variables set in the program's environment, over this process's own
  // ({"ARCHFIT_CACHE_DIR", "/srv/kernels"}); values in UTF-8.
  std::vector<std::pair<std::string, std::string>> environment;
  // The most memory the program may commit, in bytes; 0: no limit. Windows:
  // its job object's JOB_OBJECT_LIMIT_PROCESS_MEMORY, so an allocation past
  // it fails. POSIX: not applied (posix_spawn sets no resource limit).
  size_t max_memory = 0;
};

struct ProgramResult {
  bool exited = false;  // false: killed by `signal`, or stopped at the limit
  int exit_status = -1;
  int signal = 0;
  bool timed_out = false;
  // It ended but could not be waited for (the host ignores SIGCHLD): how
  // it ended is unknown; `output` is all it wrote.
  bool status_unknown = false;
  // stop_past_max_output: it wrote more than max_output and was killed then.
  bool output_overflowed = false;
  // end_what_it_leaves (Windows): the processes it started that were still
  // running when it ended, killed then.
  size_t left_running = 0;
  std::string output;        // stdout (and stderr, when merged), up to the limit
  std::string error_output;  // stderr, when captured apart, up to the limit

  bool succeeded() const { return exited && exit_status == 0; }
  // "exit status 1", "killed by signal 9", "stopped after 20000 ms",
  // "stopped after writing more than 16777216 bytes", "ended, how unknown"
  // Of a program run with `options`.
  std::string how_it_ended(const ProgramOptions& options) const;
};

// Throws std::system_error when the program cannot be started at all.
ProgramResult run_program(const std::filesystem::path& program,
                          const std::vector<std::string>& args, const ProgramOptions& options = {});

}  // namespace archfit::sys
