#include "plugins_command.hpp"

#include <nlohmann/json.hpp>

#include <iostream>

#include "plugin/plugin_host.hpp"
#include "plugin/plugin_json.hpp"
#include "render/plugins_text.hpp"
#include "session/session.hpp"
#include "sys/utf8_path.hpp"
#include "util/json_text.hpp"

namespace archfit::cli {

void PluginsCommand::add_to(CLI::App& app) {
  plugins_ = app.add_subcommand("plugins", "Plugins: kernel modules and probes loaded at run time");
  plugins_->require_subcommand(1);
  list_ = plugins_->add_subcommand("list", "Which plugins were found, loaded or rejected, and why");
  list_->add_option("--path", paths_, "Also search this folder (before ARCHFIT_PLUGIN_PATH)")
      ->allow_extra_args(false);
  list_->add_flag("--json", json_, "Print JSON: {searched, loaded, rejected}");
}

bool PluginsCommand::chosen() const { return plugins_ && plugins_->parsed(); }

int PluginsCommand::run() const {
  plugin::PluginSearch search;
  for (const auto& path : paths_) search.paths.push_back(sys::path_of_utf8(path));
  const plugin::PluginSet set = session::Session().plugins(search);
  if (json_) {
    std::cout << util::json_text(plugin::plugin_set_json(set), 2) << '\n';
  } else {
    std::cout << render::plugins_text(set);
  }
  return set.rejected.empty() ? 0 : 1;
}

}  // namespace archfit::cli
