// Status text, the thread-local last error, and the version.
#include <cstring>
#include <string>

#include "guard.hpp"

namespace archfit::capi {

namespace {
thread_local std::string last_error;
}

void set_last_error(const char* function, std::string_view what, std::string_view detail) noexcept {
  try {
    last_error.assign(function);
    last_error.append(": ").append(what).append(detail);
  } catch (...) {
    last_error.clear();  // out of memory while reporting: an empty message beats a crash
  }
}

void clear_last_error() noexcept { last_error.clear(); }

}  // namespace archfit::capi

extern "C" {

const char* archfit_status_string(archfit_status given) noexcept {
  // A C caller may pass any int (999, -1). In C++ an enum holding a value
  // outside its enumerators' range is undefined behaviour (UBSan reported
  // it), so the bits are read as an int first.
  static_assert(sizeof(archfit_status) == sizeof(int));
  int code = 0;
  std::memcpy(&code, &given, sizeof code);
  switch (code) {
    case ARCHFIT_OK:
      return "ok";
    case ARCHFIT_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case ARCHFIT_ERROR_IO:
      return "input/output error";
    case ARCHFIT_ERROR_OUT_OF_MEMORY:
      return "out of memory";
    case ARCHFIT_ERROR_UNSUPPORTED:
      return "unsupported";
    case ARCHFIT_ERROR_INTERNAL:
      return "internal error";
  }
  return "unknown status";
}

const char* archfit_last_error(void) noexcept { return archfit::capi::last_error.c_str(); }

uint32_t archfit_version(void) noexcept { return ARCHFIT_VERSION_NUMBER; }

const char* archfit_version_string(void) noexcept { return ARCHFIT_VERSION_STRING; }

}  // extern "C"
