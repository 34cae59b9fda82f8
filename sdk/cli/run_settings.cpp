#include "run_settings.hpp"

#include "session/environment_settings.hpp"

namespace archfit::cli {

session::SessionSettings run_settings(std::ostream& warnings) {
  session::EnvironmentSettings environment = session::read_environment_settings();
  for (const auto& warning : environment.warnings) warnings << warning << '\n';
  session::SessionSettings settings;
  settings.archive_limits = environment.archive_limits;
  settings.cache_dir = std::move(environment.cache_dir);
  return settings;
}

}  // namespace archfit::cli
