#include "sys/run_program.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>
#include <system_error>

extern char** environ;

namespace archfit::sys {

ProgramResult run_program(const std::filesystem::path& program,
                          const std::vector<std::string>& args, const ProgramOptions& options) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "cannot create a pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  if (options.merge_stderr) posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  // Nothing else of this process's: a host's sockets, pipes and files not
  // marked close-on-exec stay with the host (a program that leaves a
  // process behind would keep them open long after it).
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  std::vector<std::string> argv_storage{program.string()};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // Its own process group; no signal blocked; and every signal at its
  // default action — a host such as Python ignores SIGPIPE, and an ignored
  // signal stays ignored across exec.
  sigset_t no_signals;
  sigset_t every_signal;
  sigemptyset(&no_signals);
  sigfillset(&every_signal);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setsigmask(&attributes, &no_signals);
  posix_spawnattr_setsigdefault(&attributes, &every_signal);
  // This process's environment, with the options' variables set over it.
  std::vector<std::string> environment_storage;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text = *entry;
    const std::string_view name = text.substr(0, text.find('='));
    const bool replaced = std::any_of(options.environment.begin(), options.environment.end(),
                                      [&](const auto& set) { return set.first == name; });
    if (!replaced) environment_storage.emplace_back(text);
  }
  for (const auto& [name, value] : options.environment)
    environment_storage.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& entry : environment_storage) envp.push_back(entry.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int spawned =
      ::posix_spawn(&pid, program.c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    throw std::system_error(spawned, std::generic_category(), "cannot run " + program.string());
  }
  ProgramResult result;
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd readable{pipe_fds[0], POLLIN, 0};
    const int ready = ::poll(&readable, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      result.timed_out = ready == 0;
      break;
    }
    char buffer[65536];
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    if (result.output.size() < options.max_output)
      result.output.append(buffer, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  if (result.timed_out) ::kill(-pid, SIGKILL);
  int status = 0;
  pid_t reaped = 0;
  while ((reaped = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (reaped < 0) {
    // ECHILD: a host that ignores SIGCHLD has the kernel reap its children.
    result.status_unknown = true;
    return result;
  }
  result.exited = !result.timed_out && WIFEXITED(status);
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace archfit::sys
