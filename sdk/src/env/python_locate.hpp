#pragma once
// Where a Python environment keeps its packages, found without importing
// anything from it: ask an interpreter for its sys.path, or read the layout
// of a venv or a ComfyUI install.
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace archfit::env {

// A Python that could not be asked, a directory that is not what it claims:
// the message says which path and why.
class LocateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs `python -I -c "import sys; print(...)"` once, with no shell and a time
// limit, and returns the site-packages/dist-packages directories on its
// sys.path that exist. Throws LocateError when it does not start, fails, or
// runs past `timeout`.
std::vector<std::filesystem::path> site_packages_of_python(
    const std::filesystem::path& python,
    std::chrono::milliseconds timeout = std::chrono::seconds(20));

// lib/pythonX.Y/site-packages of a venv (POSIX) or Lib/site-packages (Windows
// layout, as in ComfyUI's portable python_embeded). Throws LocateError when
// there is none.
std::vector<std::filesystem::path> site_packages_of_venv(const std::filesystem::path& venv);

struct ComfyuiInstall {
  std::filesystem::path root;  // the folder holding main.py
  std::filesystem::path custom_nodes;
  std::vector<std::filesystem::path> site_packages;  // empty when no venv was found beside it
};

// `dir` is a ComfyUI checkout (main.py, custom_nodes/) or the portable build's
// top folder (ComfyUI/ and python_embeded/). Its Python environment is a
// venv or .venv inside or beside it, or python_embeded. Throws LocateError
// when `dir` is not a ComfyUI install.
ComfyuiInstall locate_comfyui(const std::filesystem::path& dir);

// The environment a bare `archfit check` means, as a user would: the
// activated venv ($VIRTUAL_ENV), else the activated conda environment
// ($CONDA_PREFIX), else the nearest at or above `cwd` of: a ComfyUI with its
// own Python (the portable build's python_embeded, or a venv in or beside a
// checkout), ComfyUI Desktop's base folder (.venv), an A1111/Forge WebUI
// (its venv, or the one-click package's system/python), a venv
// (pyvenv.cfg) or a conda environment (conda-meta/) — Linux and Windows
// layouts alike, so that a Windows tree read from WSL's /mnt/c is found —
// else the `python3` on PATH (its sys.path, nothing imported), with the
// custom_nodes of a ComfyUI found above `cwd` that has no Python of its own.
struct ChosenEnvironment {
  // "$VIRTUAL_ENV", "$CONDA_PREFIX", "ComfyUI portable", "ComfyUI",
  // "ComfyUI Desktop", "A1111/Forge WebUI", "venv", "conda environment",
  // "python3 on PATH" or "ComfyUI at DIR, python3 on PATH"
  std::string source;
  std::filesystem::path where;  // the venv, prefix, ComfyUI folder or interpreter
  std::vector<std::filesystem::path> site_packages;
  std::optional<std::filesystem::path> custom_nodes;  // a ComfyUI's
  std::filesystem::path python;  // the interpreter whose pip changes it; empty when none is found
};

// `variable` reads the environment (getenv, or a test's map). nullopt when
// none of the four is there. Throws LocateError when one that is named
// ($VIRTUAL_ENV, $CONDA_PREFIX) is not a Python environment, or the python3
// found cannot say its sys.path.
std::optional<ChosenEnvironment> choose_environment(
    const std::filesystem::path& cwd, const std::function<std::string(const char*)>& variable,
    const std::string& path_variable);

// Whether `site_packages` is laid out as on Windows (PREFIX\Lib\site-packages:
// a venv, a conda environment, ComfyUI portable's python_embeded), whatever
// OS reads it (Linux, or WSL under /mnt/c).
bool windows_site_packages(const std::filesystem::path& site_packages);

// The interpreter of the environment that owns `site_packages`
// (PREFIX/lib/pythonX.Y/site-packages: PREFIX/bin/python;
// PREFIX/Lib/site-packages: PREFIX/python.exe, or PREFIX/Scripts/python.exe
// in a Windows venv); empty when it has none.
std::filesystem::path python_of_site_packages(const std::filesystem::path& site_packages);

// The first executable `name` in the folders of a PATH-style list; nullopt
// when there is none.
std::optional<std::filesystem::path> find_program(const std::string& name,
                                                  const std::string& path_variable);

}  // namespace archfit::env
