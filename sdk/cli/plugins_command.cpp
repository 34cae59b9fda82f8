#include "plugins_command.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

#include "plugin/plugin_host.hpp"

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
  search.paths.assign(paths_.begin(), paths_.end());
  const plugin::PluginSet set = plugin::load_plugins(search);
  if (json_) {
    nlohmann::json loaded = nlohmann::json::array();
    for (const auto& plugin : set.loaded) {
      nlohmann::json modules = nlohmann::json::array();
      for (const auto& module : plugin.modules)
        modules.push_back({{"name", module.name},
                           {"entry_points", module.entry_points},
                           {"source", !module.source.empty()},
                           {"prebuilt_bytes", module.prebuilt.size()}});
      loaded.push_back({{"name", plugin.name},
                        {"version", plugin.version},
                        {"description", plugin.description},
                        {"abi", plugin.abi},
                        {"manifest", plugin.manifest.path.string()},
                        {"library", plugin.manifest.library.string()},
                        {"modules", modules},
                        {"probe", plugin.probe_json.empty()
                                      ? nlohmann::json(nullptr)
                                      : nlohmann::json::parse(plugin.probe_json, nullptr, false)},
                        {"milliseconds", plugin.milliseconds}});
    }
    nlohmann::json rejected = nlohmann::json::array();
    for (const auto& plugin : set.rejected)
      rejected.push_back({{"path", plugin.path.string()}, {"reason", plugin.reason}});
    nlohmann::json searched = nlohmann::json::array();
    for (const auto& dir : set.searched) searched.push_back(dir.string());
    std::cout << nlohmann::json{{"searched", searched}, {"loaded", loaded}, {"rejected", rejected}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << '\n';
  } else {
    if (set.searched.empty())
      std::cout << "searched  nothing: no plugin folder exists (--path DIR, ARCHFIT_PLUGIN_PATH, "
                   "or <prefix>/lib/archfit/plugins)\n";
    for (const auto& dir : set.searched) std::cout << "searched  " << dir.string() << '\n';
    for (const auto& plugin : set.loaded) {
      char time[32];
      std::snprintf(time, sizeof time, "%.2f ms", plugin.milliseconds);
      std::cout << "loaded    " << plugin.name << ' ' << plugin.version << "  (ABI " << plugin.abi
                << ", " << plugin.modules.size() << " kernel module"
                << (plugin.modules.size() == 1 ? "" : "s")
                << (plugin.probe_json.empty() ? "" : ", a probe") << ", " << time << ")  "
                << plugin.manifest.library.string() << '\n';
    }
    for (const auto& plugin : set.rejected)
      std::cout << "rejected  " << plugin.path.string() << ": " << plugin.reason << '\n';
  }
  return set.rejected.empty() ? 0 : 1;
}

}  // namespace archfit::cli
