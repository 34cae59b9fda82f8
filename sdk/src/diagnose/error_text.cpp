#include "error_text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <optional>

#include "util/text.hpp"

namespace archfit::diagnose {

namespace {

constexpr std::string_view kTraceback = "Traceback (most recent call last):";
constexpr std::string_view kReport = "# ComfyUI Error Report";
constexpr size_t kMaxMessageLines = 40;
constexpr size_t kContextBefore = 2048;
// Patterns that miss the message are tried on this much text around it:
// enough for a warning logged just before, little enough that a regular
// expression over it stays cheap.
constexpr size_t kMaxContextBytes = 16 * 1024;

// The line that starts at `at`, without its "\n" or "\r\n"; `next` is where
// the following line starts (text.size() at the end).
std::string_view line_at(std::string_view text, size_t at, size_t& next) {
  const size_t end = text.find('\n', at);
  next = end == std::string_view::npos ? text.size() : end + 1;
  std::string_view line = text.substr(at, (end == std::string_view::npos ? text.size() : end) - at);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

using util::trim;

// A line past what a terminal overwrote or a log lost: all before its last
// '\r' or NUL byte (the NULs of a preallocated or truncated file).
std::string_view past_overwrite(std::string_view line) {
  for (const char overwrite : {'\r', '\0'}) {
    const size_t at = line.rfind(overwrite);
    const size_t after = at == std::string_view::npos ? 0 : at + 1;
    if (after < line.size()) line.remove_prefix(after);
  }
  return line;
}

// Where the text of a log line starts: past_overwrite, then past the
// padding before it (spaces, tabs, NULs). A megabyte of padding must not
// become the message every signature's expression is run over.
std::string_view past_padding(std::string_view line) {
  line = past_overwrite(line);
  size_t text = 0;
  while (text < line.size() && (line[text] == ' ' || line[text] == '\t' || line[text] == '\0'))
    ++text;
  return line.substr(text);
}

bool indented(std::string_view line) {
  return !line.empty() && (line[0] == ' ' || line[0] == '\t');
}

// `  File "PATH", line N, in FUNC`
std::optional<Frame> parse_frame(std::string_view line) {
  // "  File …", or behind a prefix a log adds: "comfyui-1  |   File …".
  constexpr std::string_view kFile = "File \"";
  const size_t at = line.find(kFile);
  if (at == std::string_view::npos || (at > 0 && line[at - 1] != ' ')) return std::nullopt;
  line.remove_prefix(at + kFile.size());
  const size_t quote = line.rfind("\", line ");
  if (quote == std::string_view::npos) return std::nullopt;
  Frame frame;
  frame.file = std::string(line.substr(0, quote));
  std::string_view rest = line.substr(quote + 8);
  size_t digits = 0;
  while (digits < rest.size() && digits < 9 &&
         std::isdigit(static_cast<unsigned char>(rest[digits])))
    frame.line = frame.line * 10 + (rest[digits++] - '0');
  rest.remove_prefix(digits);
  if (rest.starts_with(", in ")) frame.function = std::string(trim(rest.substr(5)));
  return frame;
}

// "torch.AcceleratorError: CUDA error: …" → the type and the message; a line
// that does not start with a dotted Python name followed by ": " (or alone)
// has no type.
bool split_exception(std::string_view line, std::string& type, std::string& message) {
  size_t end = 0;
  while (end < line.size() && (std::isalnum(static_cast<unsigned char>(line[end])) ||
                               line[end] == '_' || line[end] == '.'))
    ++end;
  if (end == 0 || std::isdigit(static_cast<unsigned char>(line[0]))) return false;
  if (end == line.size()) {  // "KeyboardInterrupt"
    type = std::string(line);
    return true;
  }
  if (line.substr(end, 2) != ": " && line.substr(end) != ":") return false;
  type = std::string(line.substr(0, end));
  message = std::string(trim(line.substr(end + 1)));
  return true;
}

// Whether a line ends an exception's message: a blank line, or one a host
// writes between messages.
bool ends_message(std::string_view line) {
  static constexpr std::array<std::string_view, 6> kHostLines = {
      "Prompt executed in",
      "got prompt",
      "Traceback (most recent call last)",
      "!!! ",
      "During handling of the above exception",
      "The above exception was the direct cause"};
  if (trim(line).empty()) return true;
  if (line.size() > 1 && line[0] == '[' && std::isdigit(static_cast<unsigned char>(line[1])))
    return true;  // "[2025-03-01 10:00:00,000]::[InvokeAI]…", "[12:00:00] …"
  return std::any_of(kHostLines.begin(), kHostLines.end(),
                     [&](std::string_view host) { return line.starts_with(host); });
}

// Moves the "Type" of an exception line `line` (the first line of
// error.message) from the message into error.exception_type. With
// `named_like_one`, only a name ending in Error, Exception or Warning counts.
void take_exception_type(std::string_view line, bool named_like_one, ErrorText& error) {
  std::string type, first;
  if (!split_exception(line, type, first)) return;
  if (named_like_one && !type.ends_with("Error") && !type.ends_with("Exception") &&
      !type.ends_with("Warning"))
    return;
  error.exception_type = std::move(type);
  // The message holds `line` first, unless it was cut at its bound.
  error.message = first + error.message.substr(std::min(line.size(), error.message.size()));
}

// The length of a docker compose prefix on a log line ("comfyui-1  | "):
// a service name, spaces, a bar and a space; 0 when the line has none.
size_t compose_prefix_length(std::string_view line) {
  size_t at = 0;
  while (at < line.size() && at < 64 &&
         (std::isalnum(static_cast<unsigned char>(line[at])) || line[at] == '-' ||
          line[at] == '_' || line[at] == '.'))
    ++at;
  const size_t name_end = at;
  while (at < line.size() && line[at] == ' ') ++at;
  if (name_end == 0 || at == name_end || at + 1 >= line.size() || line[at] != '|' ||
      line[at + 1] != ' ')
    return 0;
  return at + 2;
}

// The message's lines from `at`: the first and those that continue it. A
// continuation line loses `prefix` (what the log writes before every line),
// as the first line already has.
size_t read_message(std::string_view text, size_t at, std::string& message,
                    std::string_view prefix = {}) {
  size_t next = at;
  for (size_t lines = 0; next < text.size() && lines < kMaxMessageLines; ++lines) {
    size_t after = 0;
    std::string_view line = line_at(text, next, after);
    if (lines > 0) {
      if (!prefix.empty() && line.starts_with(prefix)) {
        line.remove_prefix(prefix.size());
      } else if (!prefix.empty() && compose_prefix_length(prefix) == prefix.size()) {
        // Docker compose writes its prefix before every line of a container:
        // a line without it ("comfyui-1 exited with code 1") is not the
        // message's.
        break;
      }
      if (ends_message(line)) break;
      message += '\n';
    }
    // Bounded like the context: signatures' expressions run over it.
    message.append(line.substr(0, kMaxContextBytes - std::min(message.size(), kMaxContextBytes)));
    next = after;
    if (message.size() >= kMaxContextBytes) break;
  }
  return next;
}

std::string context_of(std::string_view input, size_t begin, size_t end) {
  begin = begin > kContextBefore ? begin - kContextBefore : 0;
  end = std::min(end, begin + kMaxContextBytes);
  return std::string(input.substr(begin, end - begin));
}

ErrorText from_traceback(std::string_view input, size_t start) {
  ErrorText error;
  error.kind = "traceback";
  error.offset = start;
  size_t next = 0;
  line_at(input, start, next);
  // What a log writes before each line ("comfyui-1  | " from docker compose,
  // a timestamp): whatever precedes "Traceback" on its line, taken off the
  // lines that follow.
  const size_t line_start = start == 0 ? 0 : input.rfind('\n', start - 1) + 1;
  const std::string_view prefix = input.substr(line_start, start - line_start);
  const size_t limit = std::min(input.size(), start + kMaxErrorBytes);
  while (next < limit) {
    size_t after = 0;
    std::string_view line = past_overwrite(line_at(input, next, after));
    if (!prefix.empty() && line.starts_with(prefix)) line.remove_prefix(prefix.size());
    if (auto frame = parse_frame(line)) {
      error.frames.push_back(std::move(*frame));
    } else if (!indented(line) && !trim(line).empty()) {
      // The exception line ("Type: message"), past any log prefix, then the
      // lines that continue it.
      const size_t end = read_message(input, line.data() - input.data(), error.message, prefix);
      take_exception_type(line, /*named_like_one=*/false, error);
      error.context = context_of(input, start, end);
      return error;
    }
    next = after;
  }
  error.context = context_of(input, start, next);
  return error;
}

// "- **Exception Message:** …" up to the next "- **" or "## " line.
std::string report_field(std::string_view report, std::string_view field) {
  const std::string marker = "- **" + std::string(field) + ":**";
  const size_t at = report.find(marker);
  if (at == std::string_view::npos) return {};
  std::string value;
  size_t next = at;
  for (bool first = true; next < report.size(); first = false) {
    size_t after = 0;
    std::string_view line = line_at(report, next, after);
    if (!first && (line.starts_with("- **") || line.starts_with("## "))) break;
    if (first) line.remove_prefix(marker.size());
    if (!value.empty() || !trim(line).empty()) {
      if (!value.empty()) value += '\n';
      value.append(line);
    }
    next = after;
  }
  return std::string(trim(value));
}

ErrorText from_report(std::string_view input, size_t start) {
  ErrorText error;
  error.kind = "comfyui-report";
  error.offset = start;
  const std::string_view report = input.substr(start, kMaxErrorBytes);
  error.exception_type = report_field(report, "Exception Type");
  error.message = report_field(report, "Exception Message");
  if (const size_t stack = report.find("## Stack Trace"); stack != std::string_view::npos) {
    size_t next = stack;
    line_at(report, stack, next);
    while (next < report.size()) {
      size_t after = 0;
      const std::string_view line = line_at(report, next, after);
      if (line.starts_with("## ")) break;
      if (auto frame = parse_frame(line)) error.frames.push_back(std::move(*frame));
      next = after;
    }
  }
  error.context = std::string(report);
  return error;
}

// The last occurrence of `needle`: a forward find (memchr for its first
// byte, then a compare) over 1 MB windows from the end back, so an error
// near a log's end is found at once and a word that is nowhere costs one
// fast pass (libstdc++'s rfind compares at every position: seconds over
// 100 MB).
size_t rfind_fast(std::string_view haystack, std::string_view needle) {
  constexpr size_t kWindow = size_t{1} << 20;
  if (needle.empty() || needle.size() > haystack.size()) return std::string_view::npos;
  size_t end = haystack.size();
  while (true) {
    const size_t begin = end > kWindow ? end - kWindow : 0;
    const std::string_view window = haystack.substr(begin, end - begin);
    size_t last = std::string_view::npos;
    for (size_t at = window.find(needle); at != std::string_view::npos;
         at = window.find(needle, at + 1))
      last = at;
    if (last != std::string_view::npos) return begin + last;
    if (begin == 0) return std::string_view::npos;
    end = begin + needle.size() - 1;  // a match across the window's start is in the next
  }
}

// Where the last line that reads like an error starts (one holding any of
// these words), or npos: the line of the last occurrence of any of them.
// The last word that reads like an error, and the start of its line.
struct ErrorWord {
  size_t line = std::string_view::npos;
  size_t word = std::string_view::npos;
};

ErrorWord last_error_word(std::string_view input) {
  static constexpr std::array<std::string_view, 8> kWords = {
      "Error",      "error:",           "ERROR", "not compatible",
      "CUDA error", "is not available", "fatal", "exception"};
  ErrorWord found;
  for (const auto word : kWords) {
    const size_t at = rfind_fast(input, word);
    if (at != std::string_view::npos && (found.word == std::string_view::npos || at > found.word))
      found.word = at;
  }
  if (found.word == std::string_view::npos) return found;
  const size_t newline = input.substr(0, found.word).rfind('\n');
  found.line = newline == std::string_view::npos ? 0 : newline + 1;
  return found;
}

}  // namespace

ErrorText find_last_error(std::string_view input) {
  // Empty, or only white space: judged from the end, where a log has text.
  if (input.find_last_not_of(" \t\r\n\v\f") == std::string_view::npos) return {};
  // A report is the error's own summary; a traceback after it is in its
  // attached logs.
  if (const size_t report = rfind_fast(input, kReport); report != std::string_view::npos)
    return from_report(input, report);
  if (const size_t traceback = rfind_fast(input, kTraceback); traceback != std::string_view::npos)
    return from_traceback(input, traceback);

  // No traceback: the last line that reads like an error, with its
  // continuation; else the input's end.
  if (const ErrorWord found = last_error_word(input); found.line != std::string_view::npos) {
    const size_t at = found.line;
    size_t next = 0;
    const std::string_view whole = line_at(input, at, next);
    // Past padding and overwritten text; of a line longer than a message may
    // be, the part from just before its last error word (an error written
    // after junk, or followed by megabytes of it).
    std::string_view line = past_padding(whole);
    if (line.size() > kMaxContextBytes) {
      constexpr size_t kLead = 256;  // what a message says before its "Error" word
      const size_t word = found.word - at;
      const size_t from = word > kLead ? word - kLead : 0;
      const size_t skipped = static_cast<size_t>(line.data() - whole.data());
      line = whole.substr(std::max(from, skipped), kMaxContextBytes);
    }
    const size_t start = at + static_cast<size_t>(line.data() - whole.data());
    ErrorText error;
    error.kind = at == 0 && next >= input.size() ? "message" : "log";
    error.offset = start;
    const std::string_view prefix = line.substr(0, compose_prefix_length(line));
    line.remove_prefix(prefix.size());
    const size_t message_end = read_message(input, start + prefix.size(), error.message, prefix);
    // A log line's "Name: …" is an exception only when named like one.
    take_exception_type(line, /*named_like_one=*/true, error);
    error.context = context_of(input, start, message_end);
    return error;
  }
  ErrorText error;
  error.kind = "message";
  // Nothing reads like an error: its end is what is left to go on, kept short
  // (every signature's patterns are tried on it).
  constexpr size_t kTail = 4096;
  const std::string_view tail = input.substr(input.size() > kTail ? input.size() - kTail : 0);
  error.offset = input.size() - tail.size();
  error.message = std::string(trim(tail));
  error.context = error.message;
  return error;
}

}  // namespace archfit::diagnose
