#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <thread>

namespace archfit::sys {

namespace {

using Clock = std::chrono::steady_clock;

enum class ReadEnd { end_of_file, deadline, too_much };

bool write_all(int fd, const std::vector<uint8_t>& bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t count = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) return false;
    written += static_cast<size_t>(count);
  }
  return true;
}

[[noreturn]] void child_main(int write_end, const std::function<std::vector<uint8_t>()>& work) {
  // Nothing to read; and stdout joins stderr, so that what the work prints
  // (or a plugin's exit() flushing the host's buffered stdout) never lands
  // in the host's stdout, which may be a JSON report, while its messages
  // still reach the user.
  if (const int null_fd = ::open("/dev/null", O_RDONLY); null_fd >= 0) {
    ::dup2(null_fd, STDIN_FILENO);
    if (null_fd != STDIN_FILENO) ::close(null_fd);
  } else {
    ::close(STDIN_FILENO);
  }
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  // The host's fault handlers (Python's faulthandler, a sanitizer's) would
  // report the host's state from this copy of it, and exit with a status of
  // their own: with the default action the parent sees the signal itself.
  for (const int fault : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP})
    std::signal(fault, SIG_DFL);
  int status = 0;
  try {
    if (!write_all(write_end, work())) status = kWorkThrew;
  } catch (...) {
    status = kWorkThrew;
  }
  ::_exit(status);  // never the host's atexit handlers or static destructors
}

// Reads the child's answer until it closes the pipe (it exited, or closed
// it), the deadline passes, or it sends more than `max_bytes`.
ReadEnd read_answer(int fd, Clock::time_point deadline, size_t max_bytes,
                    std::vector<uint8_t>& output) {
  constexpr size_t kChunk = size_t{1} << 16;
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return ReadEnd::deadline;
    pollfd ready{fd, POLLIN, 0};
    const int count = ::poll(&ready, 1, static_cast<int>(std::min<long long>(left, 60'000)));
    if (count < 0 && errno != EINTR) return ReadEnd::end_of_file;  // the reaping tells the rest
    if (count <= 0) continue;  // interrupted, or a slice of the wait passed
    const size_t before = output.size();
    output.resize(before + kChunk);
    const ssize_t got = ::read(fd, output.data() + before, kChunk);
    output.resize(before + static_cast<size_t>(std::max<ssize_t>(got, 0)));
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) return ReadEnd::end_of_file;
    if (output.size() > max_bytes) return ReadEnd::too_much;
  }
}

void record(int status, ChildOutcome& outcome) {
  if (WIFSIGNALED(status)) {
    outcome.ending = ChildOutcome::Ending::signalled;
    outcome.signal = WTERMSIG(status);
  } else {
    outcome.ending = ChildOutcome::Ending::exited;
    outcome.exit_status = WEXITSTATUS(status);
  }
}

// waitpid without blocking; true once the child is reaped (or cannot be).
bool reaped_now(pid_t pid, ChildOutcome& outcome) {
  int status = 0;
  for (;;) {
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid) {
      record(status, outcome);
      return true;
    }
    if (got == 0) return false;
    if (errno == EINTR) continue;
    // ECHILD: a host that ignores SIGCHLD has the kernel reap its children.
    outcome.ending = ChildOutcome::Ending::vanished;
    return true;
  }
}

void kill_and_reap(pid_t pid, ChildOutcome::Ending why, ChildOutcome& outcome) {
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  outcome.ending = why;
}

}  // namespace

ChildOutcome run_in_child(const std::function<std::vector<uint8_t>()>& work,
                          const ChildLimits& limits) {
  int pipe_ends[2];
  // Close-on-exec: a process another thread of the host starts meanwhile
  // does not keep the write end open, and with it this wait.
  if (::pipe2(pipe_ends, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "cannot make a pipe for a child");
  const auto deadline = Clock::now() + limits.time_limit;
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(pipe_ends[0]);
    ::close(pipe_ends[1]);
    throw std::system_error(error, std::generic_category(), "cannot fork a child");
  }
  if (pid == 0) {
    ::close(pipe_ends[0]);
    child_main(pipe_ends[1], work);
  }
  ::close(pipe_ends[1]);
  ChildOutcome outcome;
  const ReadEnd read = read_answer(pipe_ends[0], deadline, limits.max_bytes, outcome.output);
  ::close(pipe_ends[0]);

  if (read == ReadEnd::too_much) {
    kill_and_reap(pid, ChildOutcome::Ending::sent_too_much, outcome);
    return outcome;
  }
  if (read == ReadEnd::end_of_file) {
    // The pipe closes as the child exits, so it is reaped within moments —
    // unless it closed the pipe and went on, which the deadline ends.
    auto pause = std::chrono::microseconds(50);
    while (!reaped_now(pid, outcome)) {
      const auto left = deadline - Clock::now();
      if (left <= Clock::duration::zero()) {
        kill_and_reap(pid, ChildOutcome::Ending::timed_out, outcome);
        return outcome;
      }
      std::this_thread::sleep_for(std::min<Clock::duration>(pause, left));
      pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(10));
    }
    return outcome;
  }
  // The deadline passed with the pipe open. A child that already died (a
  // process it forked holds the pipe) is reported as it died.
  if (!reaped_now(pid, outcome)) kill_and_reap(pid, ChildOutcome::Ending::timed_out, outcome);
  return outcome;
}

std::string describe_failure(const ChildOutcome& outcome, const ChildLimits& limits,
                             std::string_view doing) {
  const std::string what(doing);
  switch (outcome.ending) {
    case ChildOutcome::Ending::exited:
      if (outcome.exit_status == 0) return "";
      return "it exited with status " + std::to_string(outcome.exit_status) + " while " + what;
    case ChildOutcome::Ending::signalled: {
      const char* abbreviation = ::sigabbrev_np(outcome.signal);
      const std::string name = abbreviation ? std::string("SIG") + abbreviation : "unnamed";
      // SIGKILL and SIGTERM come from outside (the OOM killer, a user).
      const bool from_outside = outcome.signal == SIGKILL || outcome.signal == SIGTERM;
      return (from_outside ? "it was killed while " : "it crashed ") + what + " (signal " +
             std::to_string(outcome.signal) + ", " + name + ")";
    }
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
    case ChildOutcome::Ending::vanished:
      return "its process could not be waited for (the host ignores SIGCHLD), so how it ended "
             "while " +
             what + " is unknown";
  }
  return "";
}

}  // namespace archfit::sys
