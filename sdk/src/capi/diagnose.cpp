#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "check_settings.hpp"
#include "diagnose/diagnosis.hpp"
#include "diagnose/explain.hpp"
#include "util/json_text.hpp"

using archfit::capi::ApiError;
using archfit::capi::guarded;
using archfit::capi::require_argument;
using archfit::capi::write_output;
namespace check = archfit::check;
namespace diagnose = archfit::diagnose;

namespace {

ApiError invalid(std::string message) {
  return ApiError{ARCHFIT_ERROR_INVALID_ARGUMENT, std::move(message)};
}

std::string_view bytes(const char* data, size_t size, const char* name) {
  if (!data && size != 0)
    throw invalid(std::string(name) + " is NULL but its size is " + std::to_string(size));
  return data ? std::string_view(data, size) : std::string_view();
}

const diagnose::Diagnosis* result_of(const archfit_diagnosis* diagnosis) {
  return diagnosis ? &diagnosis->result : nullptr;
}

}  // namespace

extern "C" {

archfit_status archfit_diagnose_run(archfit_context* context, const archfit_diagnose_options* given,
                                    archfit_diagnosis** out_diagnosis) noexcept {
  return guarded(__func__, [&] {
    require_argument(context, "context");
    require_argument(given, "options");
    require_argument(out_diagnosis, "out_diagnosis");
    const auto options = archfit::capi::read_options(given, "archfit_diagnose_options");
    diagnose::ExplainRequest request;
    request.text = bytes(options.text, options.text_size, "text");
    request.traceback = std::string(bytes(options.traceback, options.traceback_size, "traceback"));
    if (options.cuda_error != 0) request.cuda_error = options.cuda_error;
    archfit::session::RunChoices choices;
    if (options.kb_dir) choices.kb_dir = archfit::sys::path_of_utf8(options.kb_dir);
    // The environment: at most one of the three fields.
    const int environments =
        (options.report != nullptr) + (options.report_json != nullptr) + (options.check != nullptr);
    if (environments > 1) throw invalid("give at most one of report, report_json and check");
    if (options.report) {
      request.report = &options.report->result;
      request.report_source = "archfit_check_run";  // as this call has always named it
    }
    nlohmann::json saved;
    if (options.report_json) {
      try {
        saved = nlohmann::json::parse(options.report_json);
      } catch (const nlohmann::json::exception& error) {
        throw invalid(std::string("report_json is not JSON: ") + error.what());
      }
      request.saved_report = &saved;
      request.saved_report_name = "report_json";
    }
    if (options.check) {
      // The check runs with the diagnosis's knowledge base, as it always has.
      auto call = archfit::capi::check_settings(options.check, "archfit_diagnose_options.check");
      request.check = std::move(call.request);
      choices.scan_index = call.choices.scan_index;
    }
    auto diagnosis = std::make_unique<archfit_diagnosis>();
    try {
      diagnosis->result = context->session.explain(request, choices);
      diagnosis->fix = archfit::diagnose::fix_lines(diagnosis->result.fix);
    } catch (const diagnose::ExplainError& error) {
      throw invalid(error.what());
    } catch (const check::CheckError& error) {
      throw invalid(std::string("check: ") + error.what());
    }
    *out_diagnosis = diagnosis.release();
  });
}

void archfit_diagnosis_destroy(archfit_diagnosis* diagnosis) noexcept { delete diagnosis; }

archfit_status archfit_diagnosis_get_info(const archfit_diagnosis* diagnosis,
                                          archfit_diagnosis_info* out_info) noexcept {
  return guarded(__func__, [&] {
    require_argument(diagnosis, "diagnosis");
    require_argument(out_info, "out_info");
    const diagnose::Diagnosis& d = diagnosis->result;
    archfit_diagnosis_info info{};
    info.recognised = d.recognised() ? 1 : 0;
    // The names are string literals (kb/error_category.cpp, diagnose/diagnosis.cpp):
    // NUL-terminated, static.
    info.category = archfit::kb::to_string(d.category).data();
    info.confidence = archfit::diagnose::to_string(d.confidence).data();
    info.explanation = d.explanation.c_str();
    info.sm = d.sm.c_str();
    if (d.component) {
      info.component_name = d.component->name.c_str();
      info.component_kind = d.component->kind.c_str();
      info.component_version = d.component->version.c_str();
      info.component_path = d.component->path.c_str();
    }
    info.environment =
        d.environment ? archfit::diagnose::to_string(d.environment->verdict).data() : nullptr;
    info.fix_count = d.fix.size();
    info.evidence_count = d.environment ? d.environment->evidence.size() : 0;
    write_output(out_info, info, offsetof(archfit_diagnosis_info, evidence_count) + sizeof(size_t),
                 "out_info", "archfit_diagnosis_info");
  });
}

const char* archfit_diagnosis_fix(const archfit_diagnosis* diagnosis, size_t index) noexcept {
  return diagnosis && index < diagnosis->fix.size() ? diagnosis->fix[index].c_str() : nullptr;
}

const char* archfit_diagnosis_evidence(const archfit_diagnosis* diagnosis, size_t index) noexcept {
  const auto* d = result_of(diagnosis);
  return d && d->environment && index < d->environment->evidence.size()
             ? d->environment->evidence[index].c_str()
             : nullptr;
}

archfit_status archfit_diagnosis_json(const archfit_diagnosis* diagnosis,
                                      const char** out_json) noexcept {
  return guarded(__func__, [&] {
    require_argument(diagnosis, "diagnosis");
    require_argument(out_json, "out_json");
    std::call_once(diagnosis->json_once, [&] {
      diagnosis->json = archfit::util::json_text(diagnose::to_json(diagnosis->result));
    });
    *out_json = diagnosis->json.c_str();
  });
}

}  // extern "C"
