#include "sys/run_program.hpp"

namespace archfit::sys {

// The same words on every OS; on Windows `signal` holds the exception code
// of a program that crashed (0xC0000005, an access violation).
std::string ProgramResult::how_it_ended(const ProgramOptions& options) const {
  if (timed_out) return "stopped after " + std::to_string(options.timeout.count()) + " ms";
  if (output_overflowed)
    return "stopped after writing more than " + std::to_string(options.max_output) + " bytes";
  if (status_unknown) return "ended, how unknown (the host ignores SIGCHLD)";
  if (exited) return "exit status " + std::to_string(exit_status);
  return "killed by signal " + std::to_string(signal);
}

}  // namespace archfit::sys
