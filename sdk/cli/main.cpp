// The `archfit` command: parses the command line and hands off to one
// subcommand. Exit codes: 0 success, 1 the inputs have problems, 2 archfit
// itself could not run.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "archfit/archfit.h"
#include "cache_command.hpp"
#include "check_command.hpp"
#include "explain_command.hpp"
#include "install_command.hpp"
#include "jit_command.hpp"
#include "plugins_command.hpp"
#include "scan_command.hpp"
#include "sys/console.hpp"
#include "terminal_safe_output.hpp"

int main(int argc, char** argv) {
  archfit::sys::prepare_console();
  // The words in UTF-8 on every OS, as CLI11 and the rest of archfit take them.
  std::vector<std::string> words = archfit::sys::command_line_utf8(argc, argv);
  std::vector<char*> word_pointers;
  for (std::string& word : words) word_pointers.push_back(word.data());
  CLI::App app{"archfit — finds the CUDA code your GPU cannot run, before it fails"};
  app.set_version_flag("--version", ARCHFIT_VERSION_STRING);
  app.require_subcommand(1);
  // CLI11 takes "/name" and "/name:value" for options on Windows, which a
  // path such as /mnt/c/models would be mistaken for: archfit's
  // options are --name on every OS, and a word that is not one is a path.
  app.allow_windows_style_options(false);

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
    app.parse(static_cast<int>(word_pointers.size()), word_pointers.data());
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : 2;
  }
  // Names read from files reach the terminal escaped (terminal_safe_output.hpp);
  // colours are archfit's own only where stdout is a terminal.
  const archfit::cli::TerminalSafeStream safe_stdout(
      std::cout, archfit::sys::is_terminal(archfit::sys::Stream::out));
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
