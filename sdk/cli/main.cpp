// The `archfit` command: parses the command line and hands off to one
// subcommand. Exit codes: 0 success, 1 the inputs have problems, 2 archfit
// itself could not run.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>

#include "archfit/archfit.h"
#include "cache_command.hpp"
#include "check_command.hpp"
#include "explain_command.hpp"
#include "install_command.hpp"
#include "jit_command.hpp"
#include "plugins_command.hpp"
#include "scan_command.hpp"
#include "terminal_safe_output.hpp"

int main(int argc, char** argv) {
  CLI::App app{"archfit — finds the CUDA code your GPU cannot run, before it fails"};
  app.set_version_flag("--version", ARCHFIT_VERSION_STRING);
  app.require_subcommand(1);

  archfit::cli::ScanCommand scan;
  scan.add_to(app);
  archfit::cli::CheckCommand check;
  check.add_to(app);
  archfit::cli::CacheCommand cache;
  cache.add_to(app);
  archfit::cli::JitCommand jit;
  jit.add_to(app);
  archfit::cli::ExplainCommand explain;
  explain.add_to(app);
  archfit::cli::InstallCommand install;
  install.add_to(app);
  archfit::cli::PluginsCommand plugins;
  plugins.add_to(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : 2;
  }
  // Names read from files reach the terminal escaped (terminal_safe_output.hpp);
  // colours are archfit's own only where stdout is a terminal.
  const archfit::cli::TerminalSafeStream safe_stdout(std::cout, isatty(fileno(stdout)) != 0);
  try {
    if (app.got_subcommand("scan")) return scan.run();
    if (app.got_subcommand("check")) return check.run();
    if (cache.chosen()) return cache.run();
    if (jit.chosen()) return jit.run();
    if (explain.chosen()) return explain.run();
    if (install.chosen()) return install.run();
    if (plugins.chosen()) return plugins.run();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "archfit: %s\n", error.what());
    return 2;
  }
  return 2;
}
