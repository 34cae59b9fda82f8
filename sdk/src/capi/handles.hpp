#pragma once
// The structs behind the opaque C handles.
#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "archfit/archfit.h"
#include "binary/image.hpp"
#include "check/check.hpp"
#include "diagnose/diagnosis.hpp"
#include "jit/kernel_module.hpp"
#include "plugin/plugin_host.hpp"
#include "session/session.hpp"

// A context is a Session (session/session.hpp): the settings given once and
// the knowledge base, read on first use and kept across calls.
struct archfit_context {
  archfit::session::Session session;
};

struct archfit_module {
  std::shared_ptr<archfit::jit::KernelModule> module;
};

struct archfit_loaded_module {
  std::shared_ptr<archfit::jit::LoadedModule> loaded;
  std::string path;  // borrowed by archfit_loaded_module_info
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
  // archfit_report_text's, one per combination of archfit_text_flags.
  mutable std::array<std::once_flag, 4> text_once;
  mutable std::array<std::string, 4> text;
};

struct archfit_diagnosis {
  archfit::diagnose::Diagnosis result;
  std::vector<std::string> fix;  // result.fix's lines, which archfit_diagnosis_fix lends out
  mutable std::once_flag json_once;
  mutable std::string json;
  mutable std::once_flag text_once;  // archfit_diagnosis_text's
  mutable std::string text;
};

struct archfit_plugin_set {
  archfit::plugin::PluginSet set;           // its strings' c_str() are what the ABI lends out
  std::vector<std::string> manifest_paths;  // set.loaded's manifest paths, in UTF-8
  std::vector<std::string> rejected_paths;  // set.rejected's paths, in UTF-8
  mutable std::once_flag json_once;
  mutable std::string json;
};
