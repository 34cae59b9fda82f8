#include "progress_line.hpp"
#include "sys/console.hpp"

#include <cstdio>

namespace archfit::cli {

namespace {

std::string gigabytes(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", static_cast<double>(bytes) / 1e9);
  return text;
}

}  // namespace

ProgressLine::Mode ProgressLine::choose(bool forced_on, bool forced_off) {
  if (forced_off) return Mode::off;
  if (sys::is_terminal(sys::Stream::err)) return Mode::terminal;
  return forced_on ? Mode::lines : Mode::off;
}

ProgressLine::ProgressLine(Mode mode, std::ostream& out, std::chrono::milliseconds delay)
    : mode_(mode), out_(out), delay_(delay) {}

ProgressLine::~ProgressLine() {
  if (mode_ == Mode::terminal && drawn_) out_ << "\r\033[K" << std::flush;
}

void ProgressLine::update(const binary::ScanProgress& progress) {
  const std::lock_guard lock(mutex_);
  const auto now = Clock::now();
  if (mode_ == Mode::off || now - start_ < delay_) return;
  // Redraw a terminal line ten times a second; add a log line once a second.
  const auto every =
      mode_ == Mode::terminal ? std::chrono::milliseconds(100) : std::chrono::milliseconds(1000);
  const bool last = !progress.walking && progress.files_done == progress.files_total;
  if (drawn_ && now - last_ < every && !last) return;
  last_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, "%.1f s", seconds);
  if (mode_ == Mode::terminal) out_ << "\r\033[K";
  if (progress.walking) {
    // Before anything is read: a walk of a big tree still shows it moves.
    out_ << "archfit: walking " << progress.directories << " directories, " << progress.files_total
         << " files to read so far, " << elapsed;
  } else {
    out_ << "archfit: scanning " << progress.files_done << '/' << progress.files_total << " files, "
         << gigabytes(progress.bytes_done) << " of " << gigabytes(progress.bytes_total) << " GB, "
         << elapsed;
  }
  out_ << (mode_ == Mode::terminal ? "" : "\n") << std::flush;
  drawn_ = true;
}

binary::ProgressCallback ProgressLine::callback() {
  if (mode_ == Mode::off) return {};
  return [this](const binary::ScanProgress& progress) { update(progress); };
}

void add_progress_flags(CLI::App& command, bool& forced_on, bool& forced_off) {
  command.add_flag("--progress", forced_on,
                   "Report progress on stderr after a second even when it is not a terminal");
  command.add_flag("--no-progress", forced_off, "Never report progress");
}

}  // namespace archfit::cli
