#include "sys/run_program.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string_view>
#include <system_error>

extern char** environ;

namespace archfit::sys {

namespace {

// A pipe whose ends this process closes on exec; the child gets its write end
// by dup2, which clears that flag on the copy.
struct Pipe {
  int read_end = -1;
  int write_end = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      throw std::system_error(errno, std::generic_category(), "cannot create a pipe");
    read_end = fds[0];
    write_end = fds[1];
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() {
    close_read();
    close_write();
  }
  void close_read() {
    if (read_end >= 0) ::close(read_end);
    read_end = -1;
  }
  void close_write() {
    if (write_end >= 0) ::close(write_end);
    write_end = -1;
  }
};

}  // namespace

ProgramResult run_program(const std::filesystem::path& program,
                          const std::vector<std::string>& args, const ProgramOptions& options) {
  Pipe output;
  std::optional<Pipe> error_output;
  if (options.standard_error == StandardError::captured) error_output.emplace();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, output.write_end, STDOUT_FILENO);
  if (options.standard_error == StandardError::merged)
    posix_spawn_file_actions_adddup2(&actions, output.write_end, STDERR_FILENO);
  if (error_output)
    posix_spawn_file_actions_adddup2(&actions, error_output->write_end, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  // Nothing else of this process's: a host's sockets, pipes and files not
  // marked close-on-exec stay with the host (a program that leaves a
  // process behind would keep them open long after it).
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  if (!options.working_directory.empty())
    posix_spawn_file_actions_addchdir_np(&actions, options.working_directory.c_str());
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
  output.close_write();
  if (error_output) error_output->close_write();
  if (spawned != 0)
    throw std::system_error(spawned, std::generic_category(), "cannot run " + program.string());
  ProgramResult result;
  // Both pipes read as they fill: a program that writes much to one while
  // this process waits on the other would otherwise block for good.
  struct Stream {
    int fd;
    std::string* text;
  };
  std::vector<Stream> open_streams{{output.read_end, &result.output}};
  if (error_output) open_streams.push_back({error_output->read_end, &result.error_output});
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  size_t written = 0;  // by the program to both pipes
  while (!open_streams.empty()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    std::vector<pollfd> readable;
    for (const Stream& stream : open_streams) readable.push_back({stream.fd, POLLIN, 0});
    const int ready = ::poll(readable.data(), readable.size(), static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      result.timed_out = ready == 0;
      break;
    }
    for (size_t i = readable.size(); i-- > 0;) {
      if (readable[i].revents == 0) continue;
      char buffer[65536];
      const ssize_t n = ::read(open_streams[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        open_streams.erase(open_streams.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      std::string& text = *open_streams[i].text;
      const size_t room = options.max_output - std::min(options.max_output, text.size());
      text.append(buffer, std::min(room, static_cast<size_t>(n)));
      written += static_cast<size_t>(n);
    }
    if (options.stop_past_max_output && written > options.max_output) {
      result.output_overflowed = true;
      break;
    }
  }
  output.close_read();
  if (error_output) error_output->close_read();
  if (result.timed_out || result.output_overflowed) ::kill(-pid, SIGKILL);
  int status = 0;
  pid_t reaped = 0;
  while ((reaped = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (reaped < 0) {
    // ECHILD: a host that ignores SIGCHLD has the kernel reap its children.
    result.status_unknown = true;
    return result;
  }
  result.exited = !result.timed_out && !result.output_overflowed && WIFEXITED(status);
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace archfit::sys
