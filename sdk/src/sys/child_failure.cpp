#include <chrono>
#include <cstdio>

#include "sys/child_process.hpp"

namespace archfit::sys {

// The same words on every OS; only a crash is worded per OS
// (describe_crash: a signal on POSIX, an exception code on Windows).
std::string describe_failure(const ChildOutcome& outcome, const ChildLimits& limits,
                             std::string_view doing) {
  const std::string what(doing);
  switch (outcome.ending) {
    case ChildOutcome::Ending::exited:
      if (outcome.exit_status == 0) return "";
      return "it exited with status " + std::to_string(outcome.exit_status) + " while " + what;
    case ChildOutcome::Ending::signalled:
      return describe_crash(outcome.signal, what);
    case ChildOutcome::Ending::timed_out: {
      char seconds[32];
      const double limit = std::chrono::duration<double>(limits.time_limit).count();
      std::snprintf(seconds, sizeof seconds, "%g", limit);
      return "it did not finish " + what + " within " + seconds + " s; killed";
    }
    case ChildOutcome::Ending::sent_too_much: {
      const size_t mebibyte = size_t{1} << 20;
      const std::string limit = limits.max_bytes % mebibyte == 0
                                    ? std::to_string(limits.max_bytes / mebibyte) + " MiB"
                                    : std::to_string(limits.max_bytes) + " bytes";
      return "it sent back more than " + limit + " while " + what + "; killed";
    }
    case ChildOutcome::Ending::flooded: {
      const size_t kibibyte = size_t{1} << 10;
      return "it wrote more than " + std::to_string(limits.max_message_bytes / kibibyte) +
             " KiB to its stdout and stderr while " + what + "; killed";
    }
    case ChildOutcome::Ending::vanished:
      return "its process could not be waited for (the host ignores SIGCHLD), so how it ended "
             "while " +
             what + " is unknown";
  }
  return "";
}

}  // namespace archfit::sys
