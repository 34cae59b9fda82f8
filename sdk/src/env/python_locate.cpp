#include "python_locate.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <string>

extern char** environ;

namespace archfit::env {

namespace fs = std::filesystem;

namespace {

// Prints one sys.path entry a line. -I: no PYTHON* variables, no user site,
// no script directory; `sys` is built in, so nothing is imported from disk.
constexpr const char* kPrintSysPath = "import sys; print('\\n'.join(sys.path))";

bool is_packages_dir(const fs::path& path) {
  const auto name = path.filename().string();
  return name == "site-packages" || name == "dist-packages";
}

std::string run_captured(const fs::path& program, const std::vector<std::string>& args,
                         std::chrono::milliseconds timeout) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    throw LocateError(std::string("cannot create a pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> argv_storage{program.string()};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  // Its own process group, so a stuck interpreter is stopped with whatever it started.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  // posix_spawn, never a shell: the path is the user's and must not be parsed.
  const int spawned =
      ::posix_spawn(&pid, program.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    throw LocateError("cannot run the Python at " + program.string() + ": " +
                      std::strerror(spawned));
  }
  std::string output;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd readable{pipe_fds[0], POLLIN, 0};
    const int ready = ::poll(&readable, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = ready == 0;
      break;
    }
    char buffer[4096];
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    output.append(buffer, static_cast<size_t>(n));
    if (output.size() > (1u << 20)) break;  // sys.path is never a megabyte
  }
  ::close(pipe_fds[0]);
  if (timed_out) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    throw LocateError("the Python at " + program.string() + " did not answer within " +
                      std::to_string(timeout.count()) + " ms and was stopped");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw LocateError("the Python at " + program.string() + " failed (" +
                      (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                         : "killed by signal " + std::to_string(WTERMSIG(status))) +
                      ") when asked for its sys.path");
  }
  return output;
}

}  // namespace

std::vector<fs::path> site_packages_of_python(const fs::path& python,
                                              std::chrono::milliseconds timeout) {
  std::error_code error;
  if (!fs::exists(python, error)) throw LocateError("no Python at " + python.string());
  const std::string output = run_captured(python, {"-I", "-c", kPrintSysPath}, timeout);
  std::vector<fs::path> found;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const fs::path entry(line);
    if (is_packages_dir(entry) && fs::is_directory(entry, error)) found.push_back(entry);
  }
  if (found.empty()) {
    throw LocateError("the Python at " + python.string() +
                      " has no site-packages directory on its sys.path");
  }
  return found;
}

std::vector<fs::path> site_packages_of_venv(const fs::path& venv) {
  std::vector<fs::path> found;
  std::error_code error;
  for (fs::directory_iterator it(venv / "lib", error), end; !error && it != end;
       it.increment(error)) {
    if (it->path().filename().string().starts_with("python") &&
        fs::is_directory(it->path() / "site-packages")) {
      found.push_back(it->path() / "site-packages");
    }
  }
  if (fs::is_directory(venv / "Lib" / "site-packages", error))
    found.push_back(venv / "Lib" / "site-packages");
  if (found.empty()) {
    throw LocateError(venv.string() +
                      " is not a Python environment: it has no lib/python*/site-packages "
                      "or Lib/site-packages");
  }
  return found;
}

ComfyuiInstall locate_comfyui(const fs::path& dir) {
  std::error_code error;
  ComfyuiInstall install;
  if (fs::exists(dir / "main.py", error) && fs::is_directory(dir / "custom_nodes", error)) {
    install.root = dir;
  } else if (fs::exists(dir / "ComfyUI" / "main.py", error)) {
    install.root = dir / "ComfyUI";  // the portable build's top folder
  } else {
    throw LocateError(
        dir.string() +
        " is not a ComfyUI install: no main.py with custom_nodes/ in it or in ComfyUI/");
  }
  install.custom_nodes = install.root / "custom_nodes";
  for (const fs::path& candidate :
       {install.root / "venv", install.root / ".venv", install.root.parent_path() / "venv",
        install.root.parent_path() / "python_embeded", dir / "python_embeded"}) {
    if (!fs::is_directory(candidate, error)) continue;
    try {
      install.site_packages = site_packages_of_venv(candidate);
      break;
    } catch (const LocateError&) {
      // not an environment after all; try the next place
    }
  }
  return install;
}

}  // namespace archfit::env
