#pragma once
// `archfit check`: will this environment run on this GPU, and the exact fix.
#include <CLI/CLI.hpp>

#include "node_labels_command.hpp"
#include "probe_options.hpp"
#include "render/plan_script.hpp"

#include <optional>
#include <string>
#include <vector>

namespace archfit::cli {

class CheckCommand {
 public:
  void add_to(CLI::App& app);
  int run() const;

 private:
  render::PlanContext plan_context() const;
  static void choose_environment(check::CheckRequest& options);
  ProbeOptions probe_;
  std::vector<std::string> paths_;
  bool json_ = false;
  bool details_ = false;
  bool plan_ = false;
  bool confirm_ = false;
  bool plugins_ = false;
  bool no_plugins_ = false;
  bool no_index_ = false;
  std::vector<std::string> plugin_paths_;
  bool progress_ = false;
  bool no_progress_ = false;
  LabelsRequest labels_;
};

}  // namespace archfit::cli
