#include "scan_command.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>

#include "binary/scan_json.hpp"
#include "binary/tree_scan.hpp"
#include "progress_line.hpp"
#include "render/scan_text.hpp"
#include "run_settings.hpp"
#include "session/session.hpp"
#include "sys/console.hpp"
#include "sys/utf8_path.hpp"
#include "util/json_text.hpp"

namespace archfit::cli {

void ScanCommand::add_to(CLI::App& app) {
  CLI::App* scan = app.add_subcommand(
      "scan", "List every CUDA device image (SASS, PTX, LTO-IR) in files, directories and wheels");
  scan->add_option("paths", paths_,
                   "Files, directories (walked recursively) or .whl files (read without "
                   "installing)")
      ->required();
  scan->add_flag("--json", json_, "Print the archfit.scan/1 JSON document");
  scan->add_flag("--images", images_, "List every image, not only the per-file summary");
  scan->add_flag("--deep", deep_, "Decompress payloads and check them against their entry headers");
  scan->add_flag("--all", all_files_, "Also list files that hold no device code");
  scan->add_option("--threads", threads_, "Worker threads (default: one per CPU)");
  add_progress_flags(*scan, progress_, no_progress_);
}

int ScanCommand::run() const {
  // The words are UTF-8 (sys/console.hpp); so is every path made from them.
  std::vector<std::filesystem::path> paths;
  for (const auto& word : paths_) paths.push_back(sys::path_of_utf8(word));
  binary::TreeScanOptions options;
  options.scan.deep = deep_;
  options.threads = threads_;
  // The wheel budget (ARCHFIT_WHEEL_MAX_*) is the Session's to apply.
  const session::SessionSettings settings = run_settings(std::cerr);

  const auto start = std::chrono::steady_clock::now();
  binary::TreeScan result;
  {
    ProgressLine progress(ProgressLine::choose(progress_, no_progress_), std::cerr);
    options.on_progress = progress.callback();
    result = session::Session(settings).scan_tree(paths, options);
  }
  const double elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  if (json_) {
    std::cout << util::json_text(binary::scan_document(result.files, result.skipped), 2) << '\n';
  } else {
    render::ScanTextOptions text;
    text.images = images_;
    text.deep = deep_;
    text.all_files = all_files_;
    text.color = sys::is_terminal(sys::Stream::out);
    render::print_scan_text(std::cout, result, elapsed_ms, text);
  }
  for (const auto& file : result.files) {
    if (!file.problems.empty()) return 1;
  }
  return 0;
}

}  // namespace archfit::cli
