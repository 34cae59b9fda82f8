// The texts people read, through the C ABI: what render/ makes for the
// archfit command, made by the same functions for a report and a diagnosis.
#include <sstream>
#include <string>

#include "guard.hpp"
#include "handles.hpp"
#include "render/check_text.hpp"
#include "render/diagnosis_text.hpp"

using archfit::capi::ApiError;
using archfit::capi::guarded;
using archfit::capi::require_argument;

namespace {

constexpr uint32_t kKnownTextFlags = ARCHFIT_TEXT_COLOR | ARCHFIT_TEXT_DETAILS;

// A flag this library does not know is refused, never silently ignored.
void require_known_flags(uint32_t flags) {
  if ((flags & ~kKnownTextFlags) != 0) {
    throw ApiError{ARCHFIT_ERROR_UNSUPPORTED,
                   "flags " + std::to_string(flags) + " set bits this library (" +
                       archfit_version_string() + ") does not know: it knows " +
                       std::to_string(kKnownTextFlags) + " (archfit_text_flags)"};
  }
}

}  // namespace

extern "C" {

archfit_status archfit_report_text(const archfit_report* report, uint32_t flags,
                                   const char** out_text) noexcept {
  return guarded(__func__, [&] {
    require_argument(report, "report");
    require_argument(out_text, "out_text");
    require_known_flags(flags);
    std::call_once(report->text_once[flags], [&] {
      std::ostringstream text;
      archfit::render::print_check_text(text, report->result, (flags & ARCHFIT_TEXT_COLOR) != 0,
                                        (flags & ARCHFIT_TEXT_DETAILS) != 0);
      report->text[flags] = text.str();
    });
    *out_text = report->text[flags].c_str();
  });
}

archfit_status archfit_diagnosis_text(const archfit_diagnosis* diagnosis, uint32_t flags,
                                      const char** out_text) noexcept {
  return guarded(__func__, [&] {
    require_argument(diagnosis, "diagnosis");
    require_argument(out_text, "out_text");
    require_known_flags(flags);
    std::call_once(diagnosis->text_once,
                   [&] { diagnosis->text = archfit::render::diagnosis_text(diagnosis->result); });
    *out_text = diagnosis->text.c_str();
  });
}

}  // extern "C"
