#include "python_locate.hpp"

#include "run_program.hpp"

#include <cerrno>
#include <cstring>
#include <sstream>
#include <string>
#include <system_error>

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
  ProgramOptions options;
  options.timeout = timeout;
  options.max_output = 1u << 20;  // sys.path is never a megabyte
  ProgramResult result;
  try {
    result = run_program(program, args, options);
  } catch (const std::system_error& error) {
    throw LocateError("cannot run the Python at " + program.string() + ": " +
                      std::strerror(error.code().value()));
  }
  if (result.timed_out) {
    throw LocateError("the Python at " + program.string() + " did not answer within " +
                      std::to_string(timeout.count()) + " ms and was stopped");
  }
  if (!result.succeeded()) {
    throw LocateError("the Python at " + program.string() + " failed (" +
                      result.how_it_ended(timeout) + ") when asked for its sys.path");
  }
  return result.output;
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
