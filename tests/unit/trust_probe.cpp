// A helper for trust_test.cpp's setuid case: prints what sys/trust.hpp
// makes of ARCHFIT_PLUGIN_PATH, and the plugin search the one reader of the
// environment (session/environment_settings.hpp) builds from it, in a
// process the test has made setuid.
#include <cstdio>

#include "plugin/plugin_host.hpp"
#include "session/environment_settings.hpp"
#include "sys/trust.hpp"

int main() {
  const char* value = archfit::sys::trusted_path_variable("ARCHFIT_PLUGIN_PATH");
  std::printf("ARCHFIT_PLUGIN_PATH: %s\n", value ? value : "(ignored)");
  archfit::plugin::PluginSearch search;
  search.install_dir = false;
  const auto environment = archfit::session::read_environment_settings();
  for (const auto& dir : archfit::plugin::plugin_directories(search, environment.plugins))
    std::printf("searched: %s\n", dir.c_str());
  return 0;
}
