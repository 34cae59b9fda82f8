#include "sys/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
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

enum class ReadEnd { end_of_file, deadline, too_much, flooded };

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

// `message_end`: the pipe for its stdout and stderr, or -1 to leave them.
[[noreturn]] void child_main(int write_end, int message_end,
                             const std::function<std::vector<uint8_t>()>& work) {
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
  if (message_end >= 0) {
    ::dup2(message_end, STDOUT_FILENO);
    ::dup2(message_end, STDERR_FILENO);
    ::close(message_end);
  } else {
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
  }
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

// Reaps the child if it has ended, without blocking; true once reaped. A
// host that ignores SIGCHLD has the kernel reap it (ECHILD): false, and the
// pipe's end says when it is done.
bool ended_now(pid_t pid, ChildOutcome& outcome);

// Reads the child's answer until it closes the pipe (it exited, or closed
// it), the deadline passes, or it sends more than `max_bytes`; and, while
// it does, drains `message_fd` (-1: none) as ChildLimits says. A child that
// has ended is done even when a process it left holds its pipes open: what
// it wrote is read and `reaped` set.
ReadEnd read_answer(int fd, int message_fd, pid_t pid, Clock::time_point deadline,
                    const ChildLimits& limits, ChildOutcome& outcome, bool& reaped) {
  constexpr size_t kChunk = size_t{1} << 16;
  // How often a quiet wait looks whether the child has ended.
  constexpr long long kReapCheckMs = 10;
  std::vector<uint8_t>& output = outcome.output;
  bool answer_open = true;
  bool draining = false;  // the child has ended: read what is there, then stop
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 && !draining) return ReadEnd::deadline;
    pollfd ready[2] = {{answer_open ? fd : -1, POLLIN, 0}, {message_fd, POLLIN, 0}};
    const int count =
        ::poll(ready, 2, draining ? 0 : static_cast<int>(std::min<long long>(left, kReapCheckMs)));
    if (count < 0 && errno != EINTR) return ReadEnd::end_of_file;  // the reaping tells the rest
    if (count < 0) continue;
    if (count == 0) {
      if (draining || (!answer_open && message_fd < 0)) return ReadEnd::end_of_file;
      if (ended_now(pid, outcome)) {
        reaped = true;
        draining = true;
      }
      continue;
    }
    if (message_fd >= 0 && ready[1].revents != 0) {
      char buffer[kChunk];
      const ssize_t got = ::read(message_fd, buffer, sizeof buffer);
      if (got > 0) {
        outcome.message_bytes += static_cast<uint64_t>(got);
        const size_t room = limits.kept_message_bytes -
                            std::min(limits.kept_message_bytes, outcome.messages.size());
        outcome.messages.append(buffer, std::min(room, static_cast<size_t>(got)));
        if (outcome.message_bytes > limits.max_message_bytes) return ReadEnd::flooded;
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        message_fd = -1;  // its end closed: nothing more to drain
      }
    }
    if (!answer_open || ready[0].revents == 0) continue;
    const size_t before = output.size();
    output.resize(before + kChunk);
    const ssize_t got = ::read(fd, output.data() + before, kChunk);
    output.resize(before + static_cast<size_t>(std::max<ssize_t>(got, 0)));
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) {
      // The messages may still be coming: they are read until they end too,
      // or the deadline.
      if (message_fd < 0) return ReadEnd::end_of_file;
      answer_open = false;
      continue;
    }
    if (output.size() > limits.max_bytes) return ReadEnd::too_much;
  }
}

// The children of this process now, from /proc (a subreaper's orphaned
// descendants among them); empty when there are none or /proc cannot say.
std::vector<pid_t> children_now() {
  std::vector<pid_t> children;
  const std::string self = std::to_string(::getpid());
  FILE* list = std::fopen(("/proc/" + self + "/task/" + self + "/children").c_str(), "r");
  if (list == nullptr) return children;
  for (long pid = 0; std::fscanf(list, "%ld", &pid) == 1;)
    children.push_back(static_cast<pid_t>(pid));
  std::fclose(list);
  return children;
}

// Kills and reaps every process left behind; each one killed orphans its
// own children, which come to this subreaper, so this goes round until
// none is left (or 64 rounds: a fork bomb outrunning it is still stopped
// by the caller's process group being killed).
size_t end_descendants() {
  size_t killed = 0;
  for (int round = 0; round < 64; ++round) {
    const std::vector<pid_t> children = children_now();
    for (const pid_t child : children) {
      ::kill(child, SIGKILL);
      ::kill(-child, SIGKILL);  // its process group, should it lead one
    }
    killed += children.size();
    // Reap whatever is ours: the killed, and zombies /proc still listed.
    bool any = false;
    for (;;) {
      int status = 0;
      const pid_t got = ::waitpid(-1, &status, children.empty() ? WNOHANG : 0);
      if (got > 0) {
        any = true;
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      break;  // ECHILD: none left; 0: none has ended yet
    }
    if (children.empty() && !any) break;
  }
  return killed;
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

bool ended_now(pid_t pid, ChildOutcome& outcome) {
  int status = 0;
  pid_t got = 0;
  while ((got = ::waitpid(pid, &status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (got != pid) return false;
  record(status, outcome);
  return true;
}

void kill_and_reap(pid_t pid, ChildOutcome::Ending why, ChildOutcome& outcome) {
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  outcome.ending = why;
}

}  // namespace

namespace {

ChildOutcome run_and_reap(const std::function<std::vector<uint8_t>()>& work,
                          const ChildLimits& limits) {
  int pipe_ends[2];
  // Close-on-exec: a process another thread of the host starts meanwhile
  // does not keep the write end open, and with it this wait.
  if (::pipe2(pipe_ends, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "cannot make a pipe for a child");
  int message_ends[2] = {-1, -1};
  if (limits.capture_messages && ::pipe2(message_ends, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(pipe_ends[0]);
    ::close(pipe_ends[1]);
    throw std::system_error(error, std::generic_category(), "cannot make a pipe for a child");
  }
  const auto close_all = [&] {
    for (const int fd : {pipe_ends[0], pipe_ends[1], message_ends[0], message_ends[1]})
      if (fd >= 0) ::close(fd);
  };
  const auto deadline = Clock::now() + limits.time_limit;
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    close_all();
    throw std::system_error(error, std::generic_category(), "cannot fork a child");
  }
  if (pid == 0) {
    ::close(pipe_ends[0]);
    if (message_ends[0] >= 0) ::close(message_ends[0]);
    child_main(pipe_ends[1], message_ends[1], work);
  }
  ::close(pipe_ends[1]);
  if (message_ends[1] >= 0) ::close(message_ends[1]);
  ChildOutcome outcome;
  bool reaped = false;
  const ReadEnd read =
      read_answer(pipe_ends[0], message_ends[0], pid, deadline, limits, outcome, reaped);
  ::close(pipe_ends[0]);
  if (message_ends[0] >= 0) ::close(message_ends[0]);

  if (reaped) {
    // It ended; a process it left may still hold the pipes, and may be
    // killed by the caller (ChildLimits::end_descendants).
    if (read == ReadEnd::too_much) outcome.ending = ChildOutcome::Ending::sent_too_much;
    if (read == ReadEnd::flooded) outcome.ending = ChildOutcome::Ending::flooded;
    return outcome;
  }
  if (read == ReadEnd::too_much) {
    kill_and_reap(pid, ChildOutcome::Ending::sent_too_much, outcome);
    return outcome;
  }
  if (read == ReadEnd::flooded) {
    kill_and_reap(pid, ChildOutcome::Ending::flooded, outcome);
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

}  // namespace

ChildOutcome run_in_child(const std::function<std::vector<uint8_t>()>& work,
                          const ChildLimits& limits) {
  ChildOutcome outcome = run_and_reap(work, limits);
  if (limits.end_descendants) outcome.left_running = end_descendants();
  return outcome;
}

std::string describe_crash(int signal, const std::string& doing) {
  const char* abbreviation = ::sigabbrev_np(signal);
  const std::string name = abbreviation ? std::string("SIG") + abbreviation : "unnamed";
  // SIGKILL and SIGTERM come from outside (the OOM killer, a user).
  const bool from_outside = signal == SIGKILL || signal == SIGTERM;
  return (from_outside ? "it was killed while " : "it crashed ") + doing + " (signal " +
         std::to_string(signal) + ", " + name + ")";
}

void become_child_subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

void close_inherited_files() { ::close_range(STDERR_FILENO + 1, ~0U, 0); }

void end_quietly_on_crash() {}

}  // namespace archfit::sys
