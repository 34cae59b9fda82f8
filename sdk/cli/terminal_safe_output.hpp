#pragma once
// What `archfit` prints comes partly from what it reads: file names, ELF
// section names, identifiers in fatbins, dist-info, error logs. A file named
// with escape sequences could clear the screen, move the cursor, retitle the
// window or (OSC 52) write the clipboard of whoever runs `archfit scan` on it
// (issue 24). So everything the CLI writes to stdout passes through here:
// bytes that are not UTF-8 and control characters other than newline, tab
// and a CRLF line end (C0, DEL and C1) are shown as \xNN. archfit's own colours, SGR sequences
// (ESC [ digits m), pass when colour is on; they can only change colours.
// JSON is unchanged: it escapes control characters itself.
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace archfit::cli {

std::string escape_for_terminal(std::string_view text, bool keep_colours);

// A stream buffer that escapes, line by line, what is written to it and
// passes the result to `target`.
class TerminalSafeBuffer : public std::streambuf {
 public:
  TerminalSafeBuffer(std::streambuf* target, bool keep_colours)
      : target_(target), keep_colours_(keep_colours) {}
  ~TerminalSafeBuffer() override;
  TerminalSafeBuffer(const TerminalSafeBuffer&) = delete;
  TerminalSafeBuffer& operator=(const TerminalSafeBuffer&) = delete;

 protected:
  int_type overflow(int_type ch) override;
  std::streamsize xsputn(const char* text, std::streamsize count) override;
  int sync() override;

 private:
  void write_lines();  // the complete lines pending
  void write_all();

  std::streambuf* target_;
  bool keep_colours_;
  std::string pending_;  // since the last newline
};

// Puts a TerminalSafeBuffer under `stream` for the lifetime of this object.
class TerminalSafeStream {
 public:
  TerminalSafeStream(std::ostream& stream, bool keep_colours);
  ~TerminalSafeStream();
  TerminalSafeStream(const TerminalSafeStream&) = delete;
  TerminalSafeStream& operator=(const TerminalSafeStream&) = delete;

 private:
  std::ostream& stream_;
  TerminalSafeBuffer buffer_;
  std::streambuf* original_;
};

}  // namespace archfit::cli
