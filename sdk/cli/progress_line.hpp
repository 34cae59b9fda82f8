#pragma once
// "scanning 12/200 files, 0.8 of 1.5 GB" on stderr, once a scan has run for a
// second: a check of a big environment (or a 900 MB torch wheel) should not
// look hung, and a fast one should print nothing.
#include <chrono>
#include <mutex>
#include <ostream>

#include <CLI/CLI.hpp>

#include "binary/scan_progress.hpp"

namespace archfit::cli {

class ProgressLine {
 public:
  enum class Mode {
    off,
    terminal,  // one line, redrawn in place (stderr is a terminal)
    lines,     // a new line now and then (--progress into a log)
  };

  // The mode the flags and stderr ask for: --no-progress wins, then
  // --progress, then a terminal on stderr.
  static Mode choose(bool forced_on, bool forced_off);

  explicit ProgressLine(Mode mode, std::ostream& out,
                        std::chrono::milliseconds delay = std::chrono::seconds(1));
  ~ProgressLine();  // clears a line drawn in place
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void update(const binary::ScanProgress& progress);
  binary::ProgressCallback callback();  // empty when off: the scan skips the calls

 private:
  using Clock = std::chrono::steady_clock;
  Mode mode_;
  std::ostream& out_;
  std::chrono::milliseconds delay_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = start_;
  bool drawn_ = false;
  std::mutex mutex_;
};

// --progress and --no-progress, the same on every command that scans.
void add_progress_flags(CLI::App& command, bool& forced_on, bool& forced_off);

}  // namespace archfit::cli
