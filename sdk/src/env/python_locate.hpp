#pragma once
// Where a Python environment keeps its packages, found without importing
// anything from it: ask an interpreter for its sys.path, or read the layout
// of a venv or a ComfyUI install.
#include <chrono>
#include <filesystem>
#include <optional>
#include <stdexcept>
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

}  // namespace archfit::env
