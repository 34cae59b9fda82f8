#include "plugins_text.hpp"

#include <cstdio>
#include <sstream>

namespace archfit::render {

std::string plugins_text(const plugin::PluginSet& set) {
  std::ostringstream out;
  if (set.searched.empty())
    out << "searched  nothing: no plugin folder exists (--path DIR, ARCHFIT_PLUGIN_PATH, "
           "or <prefix>/lib/archfit/plugins)\n";
  for (const auto& dir : set.searched) out << "searched  " << dir.string() << '\n';
  for (const auto& plugin : set.loaded) {
    char time[32];
    std::snprintf(time, sizeof time, "%.2f ms", plugin.milliseconds);
    out << "loaded    " << plugin.name << ' ' << plugin.version << "  (ABI " << plugin.abi << ", "
        << plugin.modules.size() << " kernel module" << (plugin.modules.size() == 1 ? "" : "s")
        << (plugin.probe_json.empty() ? "" : ", a probe") << ", " << time << ")  "
        << plugin.manifest.library.string() << '\n';
  }
  for (const auto& plugin : set.rejected)
    out << "rejected  " << plugin.path.string() << ": " << plugin.reason << '\n';
  return out.str();
}

}  // namespace archfit::render
