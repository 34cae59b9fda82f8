#pragma once
// `archfit plugins list [--path DIR]… [--json]`: the plugins in the search
// path (the --path folders, ARCHFIT_PLUGIN_PATH, the install's
// lib/archfit/plugins), which loaded and which were rejected, and why.
// Exit 0 when every plugin found loaded, 1 when some were rejected.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace archfit::cli {

class PluginsCommand {
 public:
  void add_to(CLI::App& app);
  bool chosen() const;
  int run() const;

 private:
  CLI::App* plugins_ = nullptr;
  CLI::App* list_ = nullptr;
  std::vector<std::string> paths_;
  bool json_ = false;
};

}  // namespace archfit::cli
