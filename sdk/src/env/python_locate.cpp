#include "python_locate.hpp"

#include "sys/run_program.hpp"
#include "sys/trust.hpp"
#include "sys/user_folders.hpp"
#include "sys/utf8_path.hpp"

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
  sys::ProgramOptions options;
  options.timeout = timeout;
  options.max_output = 1u << 20;  // sys.path is never a megabyte
  sys::ProgramResult result;
  try {
    result = sys::run_program(program, args, options);
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
                      result.how_it_ended(options) + ") when asked for its sys.path");
  }
  return result.output;
}

}  // namespace

std::vector<fs::path> site_packages_of_python(const fs::path& python,
                                              std::chrono::milliseconds timeout) {
  std::error_code error;
  if (!fs::exists(python, error)) throw LocateError("no Python at " + python.string());
  // As root (a Slurm prolog, a node-labels DaemonSet) an interpreter another
  // user could replace would run their code with root's rights: it must pass
  // the rule plugins pass (sys/trust.hpp). As a user, running the Python of
  // an environment one checks is what a user does anyway.
  if (sys::running_as_superuser()) {
    if (const std::string untrusted = sys::untrusted_path_chain(python, "programs");
        !untrusted.empty())
      throw LocateError("refusing to run the Python at " + python.string() +
                        " as root: " + untrusted);
  }
  // -X utf8: sys.path is printed in UTF-8 whatever the console's code page
  // (a Windows Python writes a pipe in the ANSI one), and read as UTF-8.
  const std::string output =
      run_captured(python, {"-I", "-X", "utf8", "-c", kPrintSysPath}, timeout);
  std::vector<fs::path> found;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // a Windows Python's line ends
    if (line.empty()) continue;
    const fs::path entry = sys::path_of_utf8(line);
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

bool windows_site_packages(const fs::path& site_packages) {
  return site_packages.parent_path().filename() == "Lib";
}

fs::path python_of_site_packages(const fs::path& site_packages) {
  const fs::path lib = site_packages.parent_path();
  if (windows_site_packages(site_packages)) {
    // Read from Linux or WSL, a Windows interpreter is never run, and a
    // Windows disk may not mark it executable: being there is enough.
    const fs::path prefix = lib.parent_path();
    for (const auto& candidate : {prefix / "python.exe", prefix / "Scripts" / "python.exe"}) {
      std::error_code error;
      if (fs::is_regular_file(candidate, error)) return candidate;
    }
    return {};
  }
  // PREFIX/lib/pythonX.Y/site-packages only: a bare folder of packages
  // has no interpreter of its own, whatever lies two folders up.
  if (!lib.filename().string().starts_with("python") ||
      !lib.parent_path().filename().string().starts_with("lib"))
    return {};
  const fs::path prefix = lib.parent_path().parent_path();
  for (const auto& candidate : {prefix / "bin" / "python", prefix / "bin" / "python3"}) {
    if (sys::may_run(candidate)) return candidate;
  }
  return {};
}

std::optional<fs::path> find_program(const std::string& name, const std::string& path_variable) {
  std::string_view rest = path_variable;
  while (!rest.empty()) {
    const auto colon = rest.find(sys::kPathListSeparator);
    const std::string folder(rest.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (folder.empty()) continue;  // "" would mean the working directory: not searched
    const fs::path candidate = sys::path_of_utf8(folder) / name;
    if (sys::may_run(candidate) && !fs::is_directory(candidate)) return candidate;
  }
  return std::nullopt;
}

namespace {

// The site-packages of the environment at `prefix`, or none.
std::vector<fs::path> site_packages_or_none(const fs::path& prefix) {
  std::error_code error;
  if (!fs::is_directory(prefix, error)) return {};
  try {
    return site_packages_of_venv(prefix);
  } catch (const LocateError&) {
    return {};
  }
}

ChosenEnvironment chosen_at(std::string source, const fs::path& where,
                            std::vector<fs::path> site_packages,
                            std::optional<fs::path> custom_nodes = std::nullopt) {
  fs::path python = python_of_site_packages(site_packages.front());
  return {std::move(source), where, std::move(site_packages), std::move(custom_nodes),
          std::move(python)};
}

// The layouts other than a ComfyUI checkout or portable build that a user
// may stand in, on Linux or a Windows disk read from Linux or WSL:
// ComfyUI Desktop's base folder (.venv, custom_nodes and models, with
// main.py inside the installed app), an A1111/Forge WebUI (webui.py and
// modules/, its venv inside, or the one-click package's system\python), and
// a plain venv (pyvenv.cfg) or conda environment (conda-meta/).
std::optional<ChosenEnvironment> other_layout_at(const fs::path& dir) {
  std::error_code error;
  const auto is_dir = [&](const fs::path& path) { return fs::is_directory(path, error); };
  const auto is_file = [&](const fs::path& path) { return fs::is_regular_file(path, error); };
  if (is_dir(dir / "custom_nodes") && is_dir(dir / "models") && !is_file(dir / "main.py")) {
    if (auto site = site_packages_or_none(dir / ".venv"); !site.empty())
      return chosen_at("ComfyUI Desktop", dir, std::move(site), dir / "custom_nodes");
  }
  for (const fs::path& webui : {dir, dir / "webui"}) {
    if (!is_file(webui / "webui.py") || !is_dir(webui / "modules")) continue;
    for (const fs::path& prefix :
         {webui / "venv", webui.parent_path() / "system" / "python", dir / "system" / "python"}) {
      if (auto site = site_packages_or_none(prefix); !site.empty())
        return chosen_at("A1111/Forge WebUI", webui, std::move(site));
    }
  }
  if (is_file(dir / "pyvenv.cfg")) {
    if (auto site = site_packages_or_none(dir); !site.empty())
      return chosen_at("venv", dir, std::move(site));
  }
  if (is_dir(dir / "conda-meta")) {
    if (auto site = site_packages_or_none(dir); !site.empty())
      return chosen_at("conda environment", dir, std::move(site));
  }
  return std::nullopt;
}

}  // namespace

std::optional<ChosenEnvironment> choose_environment(
    const fs::path& cwd, const std::function<std::string(const char*)>& variable,
    const std::string& path_variable) {
  for (const auto& [name, source] :
       {std::pair{"VIRTUAL_ENV", "$VIRTUAL_ENV"}, std::pair{"CONDA_PREFIX", "$CONDA_PREFIX"}}) {
    const std::string value = variable(name);
    if (value.empty()) continue;
    // UTF-8, as every text inside archfit: not fs::path(std::string), which
    // Windows' C++ library reads byte by byte ("Modèles" → "ModÃ¨les").
    const fs::path prefix = sys::path_of_utf8(value);
    ChosenEnvironment chosen{source, prefix, {}, std::nullopt, {}};
    try {
      chosen.site_packages = site_packages_of_venv(prefix);
      chosen.python = python_of_site_packages(chosen.site_packages.front());
    } catch (const LocateError&) {
      throw LocateError(std::string(source) + " names " + value + ", which " +
                        "is not a Python environment (no lib/python*/site-packages): " +
                        "deactivate it or give --venv");
    }
    return chosen;
  }
  // A ComfyUI at or above the working folder: the user may be anywhere
  // inside it. Its own Python is the portable build's python_embeded or a
  // venv in or beside the checkout; one without either runs on the python3
  // on PATH, whose site-packages are then checked with its custom_nodes.
  std::optional<ComfyuiInstall> comfyui_without_python;
  std::error_code error;
  for (fs::path dir = fs::absolute(cwd, error).lexically_normal(); !error && !dir.empty();
       dir = dir.parent_path()) {
    try {
      const ComfyuiInstall install = locate_comfyui(dir);
      const fs::path top = install.root.parent_path();
      const bool portable = fs::is_directory(top / "python_embeded", error);
      if (!install.site_packages.empty()) {
        return ChosenEnvironment{portable ? "ComfyUI portable" : "ComfyUI",
                                 portable ? top : install.root, install.site_packages,
                                 install.custom_nodes,
                                 python_of_site_packages(install.site_packages.front())};
      }
      if (!comfyui_without_python) comfyui_without_python = install;
    } catch (const LocateError&) {
      // no ComfyUI here; another layout, or one folder up
      if (auto other = other_layout_at(dir)) return other;
    }
    if (dir == dir.root_path()) break;
  }
  if (const auto python = find_program("python3", path_variable)) {
    ChosenEnvironment chosen{"python3 on PATH", *python, site_packages_of_python(*python),
                             std::nullopt, *python};
    if (comfyui_without_python) {
      chosen.source = "ComfyUI at " + comfyui_without_python->root.string() + ", python3 on PATH";
      chosen.custom_nodes = comfyui_without_python->custom_nodes;
    }
    return chosen;
  }
  return std::nullopt;
}

}  // namespace archfit::env
