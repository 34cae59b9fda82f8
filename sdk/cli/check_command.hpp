#pragma once
// `archfit check`: will this environment run on this GPU, and the exact fix.
#include <CLI/CLI.hpp>

#include "check/plan.hpp"

#include <optional>
#include <string>
#include <vector>

namespace archfit::cli {

class CheckCommand {
 public:
  void add_to(CLI::App& app);
  int run() const;

 private:
  check::PlanContext plan_context() const;
  std::vector<std::string> gpus_;
  std::string driver_;
  std::vector<std::string> site_packages_;
  std::vector<std::string> venvs_;
  std::string custom_nodes_;
  std::string python_;
  std::string comfyui_;
  std::vector<std::string> wheels_;
  std::vector<std::string> paths_;
  std::string kb_;
  bool json_ = false;
  bool plan_ = false;
  bool confirm_ = false;
  bool progress_ = false;
  bool no_progress_ = false;
  unsigned threads_ = 0;
};

}  // namespace archfit::cli
