#pragma once
// The error in what a user holds — one message, a traceback, a whole
// ComfyUI or InvokeAI log, or ComfyUI's pasted "Error Report" — found and
// taken apart: the exception's type and message, and the traceback's frames.
// Input is bytes: logs are not always UTF-8, and nothing here assumes so.
#include <string>
#include <string_view>
#include <vector>

namespace archfit::diagnose {

struct Frame {
  std::string file;  // as printed: "/x/site-packages/xformers/ops/fmha/__init__.py", "C:\\…"
  int line = 0;
  std::string function;
};

struct ErrorText {
  // "traceback" (Python's), "comfyui-report" (the pasted Error Report),
  // "log" (a line in a longer text with no traceback), "message" (the whole
  // input is the error), "empty".
  std::string kind = "empty";
  std::string exception_type;  // "RuntimeError", "torch.AcceleratorError"; "" when none is named
  std::string message;         // the exception's message, all its lines
  std::vector<Frame> frames;   // outermost first, as Python prints them
  std::string context;         // the text around the error: what a pattern may also match
  size_t offset = 0;           // where the error starts in the input
};

// The last error in `input`: the last ComfyUI Error Report (the error's own
// summary; tracebacks after it are in its attached logs); else the last
// Python traceback; else the last line that reads like an error, with the
// lines that continue it; else the input's last 4 KB. Linear in the input's
// size; reads at most kMaxErrorBytes around the error.
ErrorText find_last_error(std::string_view input);

inline constexpr size_t kMaxErrorBytes = 64 * 1024;

}  // namespace archfit::diagnose
