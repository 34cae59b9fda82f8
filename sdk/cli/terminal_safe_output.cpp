#include "terminal_safe_output.hpp"

#include <cstdio>
#include <cstring>

#include "util/utf8.hpp"

namespace archfit::cli {

namespace {

void append_escaped_byte(std::string& out, unsigned char byte) {
  char text[5];
  std::snprintf(text, sizeof text, "\\x%02x", byte);
  out += text;
}

// The length of an SGR sequence (ESC [ digits and ';' m) at the start of
// `text`, or 0.
size_t sgr_length(std::string_view text) {
  if (text.size() < 3 || text[0] != '\x1b' || text[1] != '[') return 0;
  for (size_t i = 2; i < text.size(); ++i) {
    if (text[i] == 'm') return i + 1;
    if ((text[i] < '0' || text[i] > '9') && text[i] != ';') return 0;
  }
  return 0;
}

}  // namespace

std::string escape_for_terminal(std::string_view text, bool keep_colours) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const auto byte = static_cast<unsigned char>(text.front());
    size_t length = 1;
    if (byte == '\n' || byte == '\t' || (byte >= 0x20 && byte < 0x7f)) {
      out += static_cast<char>(byte);
    } else if (byte == '\r' && text.size() > 1 && text[1] == '\n') {
      // A CRLF line end (a .bat plan's) ends the line as LF alone does; a CR
      // alone, which would let the rest overwrite the line, is escaped.
      out += "\r\n";
      length = 2;
    } else if (const size_t sgr = keep_colours ? sgr_length(text) : 0; sgr != 0) {
      out.append(text.substr(0, sgr));
      length = sgr;
    } else if (byte < 0x80) {
      append_escaped_byte(out, byte);  // C0 controls, ESC, DEL
    } else if (const size_t sequence = util::utf8_sequence_length(text); sequence == 0) {
      append_escaped_byte(out, byte);  // not UTF-8: the byte as it is
    } else if (sequence == 2 && byte == 0xc2 && static_cast<unsigned char>(text[1]) < 0xa0) {
      // U+0080–U+009F, the C1 controls: some terminals take U+009B as CSI.
      append_escaped_byte(out, byte);
      append_escaped_byte(out, static_cast<unsigned char>(text[1]));
      length = 2;
    } else {
      out.append(text.substr(0, sequence));
      length = sequence;
    }
    text.remove_prefix(length);
  }
  return out;
}

TerminalSafeBuffer::~TerminalSafeBuffer() { write_all(); }

TerminalSafeBuffer::int_type TerminalSafeBuffer::overflow(int_type ch) {
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  pending_ += traits_type::to_char_type(ch);
  if (ch == '\n') write_lines();
  return ch;
}

std::streamsize TerminalSafeBuffer::xsputn(const char* text, std::streamsize count) {
  pending_.append(text, static_cast<size_t>(count));
  if (std::memchr(text, '\n', static_cast<size_t>(count)) != nullptr) write_lines();
  return count;
}

int TerminalSafeBuffer::sync() {
  write_all();
  return target_->pubsync();
}

// Whole lines only: a UTF-8 character or a colour sequence written in two
// pieces is never cut, since neither spans a newline.
void TerminalSafeBuffer::write_lines() {
  const size_t end = pending_.rfind('\n');
  if (end == std::string::npos) return;
  const std::string safe =
      escape_for_terminal(std::string_view(pending_).substr(0, end + 1), keep_colours_);
  target_->sputn(safe.data(), static_cast<std::streamsize>(safe.size()));
  pending_.erase(0, end + 1);
}

void TerminalSafeBuffer::write_all() {
  write_lines();
  if (pending_.empty()) return;
  const std::string safe = escape_for_terminal(pending_, keep_colours_);
  target_->sputn(safe.data(), static_cast<std::streamsize>(safe.size()));
  pending_.clear();
}

TerminalSafeStream::TerminalSafeStream(std::ostream& stream, bool keep_colours)
    : stream_(stream), buffer_(stream.rdbuf(), keep_colours), original_(stream.rdbuf(&buffer_)) {}

TerminalSafeStream::~TerminalSafeStream() {
  stream_.flush();
  stream_.rdbuf(original_);
}

}  // namespace archfit::cli
