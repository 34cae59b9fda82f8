#pragma once
// What to probe and scan, as `archfit check` takes it: the GPU and driver
// (real or named), and the environment (site-packages, a venv, a Python, a
// ComfyUI folder, custom_nodes, wheels). `archfit explain` takes the same
// options to weigh an error against the environment it came from.
#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "check/check.hpp"
#include "session/session.hpp"

namespace archfit::cli {

struct ProbeOptions {
  std::vector<std::string> gpus;
  std::string driver;
  std::vector<std::string> site_packages;
  std::vector<std::string> venvs;
  std::string custom_nodes;
  std::string python;
  std::string comfyui;
  std::vector<std::string> wheels;
  std::string kb;
  unsigned threads = 0;

  // Registers --gpu, --driver, --site-packages, --venv, --custom-nodes,
  // --python, --comfyui, --wheel, --kb and --threads on `command`.
  void add_to(CLI::App& command);

  // Whether anything beyond --kb and --threads was given.
  bool any() const;

  // What to check, with --venv, --python and --comfyui resolved to
  // site-packages directories (throws env::LocateError naming what is
  // wrong); `warnings` hears what was given but found lacking.
  check::CheckRequest check_request(const std::string& command, std::ostream& warnings) const;
  // --threads and --kb added to `settings`.
  session::SessionSettings session_settings(session::SessionSettings settings) const;
};

}  // namespace archfit::cli
