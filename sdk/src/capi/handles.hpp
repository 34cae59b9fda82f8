#pragma once
// The structs behind the opaque C handles.
#include <mutex>
#include <string>

#include "archfit/archfit.h"
#include "binary/image.hpp"
#include "check/check.hpp"

struct archfit_context {
  uint32_t threads = 0;
};

struct archfit_scan {
  archfit::binary::FileScan result;
  // Built on first request; call_once keeps concurrent const readers safe.
  mutable std::once_flag json_once;
  mutable std::string json;
};

struct archfit_report {
  archfit::check::CheckReport result;
  std::vector<std::string> verdicts;  // the borrowed verdict strings, one per component
  mutable std::once_flag json_once;
  mutable std::string json;
};
